package manage

import (
	"context"
	"strings"

	"github.com/parley/parley"
	"github.com/parley/parley/db/business"
)

// The tenant's catalog: the products RECOMMEND_PRODUCT searches, created,
// updated by id or by their externalId, read, listed and deleted.

// CheckProduct checks in against cur, the stored product it changes (nil
// for a new one, whose name is required): the write to apply, or its
// problems.
func CheckProduct(in parley.ProductInput, cur *parley.Product) (business.ProductWrite, parley.FieldErrors) {
	errs := in.Check(cur)
	return business.ProductWrite{ExternalID: in.ExternalID, Name: in.Name, Description: in.Description, Price: in.Price,
		Currency: in.Currency, URL: in.URL, ImageURL: in.ImageURL, Tags: in.Tags, IsActive: in.IsActive}, errs
}

// CreateProduct adds a product; with an externalId already used it updates
// that product instead, checked against it. created says which.
func (s *Service) CreateProduct(ctx context.Context, t parley.Tenant, in parley.ProductInput) (parley.Product, bool, error) {
	var cur *parley.Product
	if ext := strings.TrimSpace(in.ExternalID.Value); in.ExternalID.Set && !in.ExternalID.Null && ext != "" {
		stored, err := s.DB.ProductByExternalID(ctx, t.ID, ext)
		switch {
		case err == nil:
			cur = &stored
		case parley.ErrorKind(err) != parley.KindNotFound:
			return parley.Product{}, false, err
		}
	}
	w, errs := CheckProduct(in, cur)
	if err := errs.Err(); err != nil {
		return parley.Product{}, false, err
	}
	return s.DB.UpsertProduct(ctx, t.ID, w)
}

// UpdateProduct changes the fields of in that are set, of cur, the
// product as the caller read it (Product): its price and currency are
// the ones a write that sets only one of them is checked against.
func (s *Service) UpdateProduct(ctx context.Context, cur parley.Product, in parley.ProductInput) (parley.Product, error) {
	w, errs := CheckProduct(in, &cur)
	if err := errs.Err(); err != nil {
		return parley.Product{}, err
	}
	return s.DB.UpdateProduct(ctx, cur.TenantID, cur.ID, w)
}

// Product reads one of the tenant's products.
func (s *Service) Product(ctx context.Context, tenantID, id string) (parley.Product, error) {
	return s.DB.Product(ctx, tenantID, id)
}

// ListProducts reads one page of the tenant's catalog and its total. The
// query's bounds (page, limit, the search's length) are the surface's.
func (s *Service) ListProducts(ctx context.Context, tenantID string, q business.ProductQuery) ([]parley.Product, int, error) {
	return s.DB.ListProducts(ctx, tenantID, q)
}

// DeleteProduct deletes one of the tenant's products.
func (s *Service) DeleteProduct(ctx context.Context, tenantID, id string) error {
	return s.DB.DeleteProduct(ctx, tenantID, id)
}
