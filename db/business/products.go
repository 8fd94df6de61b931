package business

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/parley/parley"
	"github.com/parley/parley/db/internal/pgbase"
)

const productColumns = `id, tenant_id, external_id, name, description, price::float8 AS price, currency, url,
	image_url, tags, is_active, created_at, updated_at`

// ProductWrite is a product create or partial update.
type ProductWrite struct {
	ExternalID  parley.Opt[string]
	Name        parley.Opt[string]
	Description parley.Opt[string]
	Price       parley.Opt[float64]
	Currency    parley.Opt[string]
	URL         parley.Opt[string]
	ImageURL    parley.Opt[string]
	Tags        parley.Opt[[]string]
	IsActive    parley.Opt[bool]
}

// ProductQuery filters and pages the catalog.
type ProductQuery struct {
	Search     string
	ActiveOnly bool
	Page       int
	Limit      int
}

// ListProducts returns one page of the catalog and the total.
func (d *Business) ListProducts(ctx context.Context, tenantID string, q ProductQuery) ([]parley.Product, int, error) {
	where, order, args := productFilter(tenantID, q)
	var total int
	if err := d.pool.QueryRow(ctx, `SELECT count(*) FROM products`+where, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("counting products: %w", err)
	}
	ps, err := d.productPage(ctx, where, order, args, q)
	return ps, total, err
}

// productFilter is the WHERE and ORDER BY of a catalog query, with their arguments.
func productFilter(tenantID string, q ProductQuery) (where, order string, args []any) {
	where = " WHERE tenant_id = $1"
	args = []any{tenantID}
	order = " ORDER BY name, id"
	if q.ActiveOnly {
		where += " AND is_active"
	}
	if q.Search != "" {
		args = append(args, q.Search, pgbase.EscapeLike(q.Search))
		n := len(args)
		where += fmt.Sprintf(` AND (search @@ (websearch_to_tsquery('english', $%d) || websearch_to_tsquery('simple', $%d))
			OR name ILIKE '%%' || $%d || '%%' OR $%d = ANY(tags))`, n-1, n-1, n, n-1)
		order = fmt.Sprintf(` ORDER BY ts_rank(search, websearch_to_tsquery('english', $%d) || websearch_to_tsquery('simple', $%d)) DESC, name, id`, n-1, n-1)
	}
	return where, order, args
}

func (d *Business) productPage(ctx context.Context, where, order string, args []any, q ProductQuery) ([]parley.Product, error) {
	args = append(args, q.Limit, (max(q.Page, 1)-1)*q.Limit)
	rows, _ := d.pool.Query(ctx, `SELECT `+productColumns+` FROM products`+where+order+
		fmt.Sprintf(" LIMIT $%d OFFSET $%d", len(args)-1, len(args)), args...)
	ps, err := pgx.CollectRows(rows, pgx.RowToStructByName[parley.Product])
	if err != nil {
		return nil, fmt.Errorf("listing products: %w", err)
	}
	return ps, nil
}

// parley.Product returns one of the tenant's products.
func (d *Business) Product(ctx context.Context, tenantID, id string) (parley.Product, error) {
	return product(ctx, d.pool, tenantID, id)
}

// ProductByExternalID returns the tenant's product with that externalId.
func (d *Business) ProductByExternalID(ctx context.Context, tenantID, externalID string) (parley.Product, error) {
	rows, _ := d.pool.Query(ctx, `SELECT `+productColumns+` FROM products WHERE tenant_id = $1 AND external_id = $2`, tenantID, externalID)
	p, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[parley.Product])
	if err != nil {
		return parley.Product{}, pgbase.NotFound(err, "Product")
	}
	return p, nil
}

func product(ctx context.Context, q pgbase.Querier, tenantID, id string) (parley.Product, error) {
	if !pgbase.LooksLikeUUID(id) {
		return parley.Product{}, parley.Errorf(parley.KindNotFound, "Product not found")
	}
	rows, _ := q.Query(ctx, `SELECT `+productColumns+` FROM products WHERE tenant_id = $1 AND id = $2`, tenantID, id)
	p, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[parley.Product])
	if err != nil {
		return parley.Product{}, pgbase.NotFound(err, "Product")
	}
	return p, nil
}

func productSets(w ProductWrite) []pgbase.SetClause {
	var sets []pgbase.SetClause
	sets = pgbase.AddSet(sets, "external_id", w.ExternalID)
	sets = pgbase.AddSet(sets, "name", w.Name)
	sets = pgbase.AddSet(sets, "description", w.Description)
	sets = pgbase.AddSet(sets, "price", w.Price)
	sets = pgbase.AddSet(sets, "currency", w.Currency)
	sets = pgbase.AddSet(sets, "url", w.URL)
	sets = pgbase.AddSet(sets, "image_url", w.ImageURL)
	sets = pgbase.AddListSet(sets, "tags", w.Tags)
	sets = pgbase.AddSet(sets, "is_active", w.IsActive)
	return sets
}

func externalIDConflict(err error) error {
	if pgbase.IsUniqueViolation(err, "products_external_id") {
		return &parley.Error{Kind: parley.KindConflict, Message: "Another product already has this externalId",
			Details: map[string]string{"externalId": "already used by another product"}}
	}
	return nil
}

// UpsertProduct creates a product or, when ExternalID names an existing one, updates it.
func (d *Business) UpsertProduct(ctx context.Context, tenantID string, w ProductWrite) (parley.Product, bool, error) {
	var p parley.Product
	created := false
	err := pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		if w.ExternalID.Set && !w.ExternalID.Null {
			var id string
			err := tx.QueryRow(ctx, `SELECT id FROM products WHERE tenant_id = $1 AND external_id = $2 FOR UPDATE`,
				tenantID, w.ExternalID.Value).Scan(&id)
			if err == nil {
				var uerr error
				p, uerr = updateProduct(ctx, tx, tenantID, id, w)
				return uerr
			}
			if !errors.Is(err, pgx.ErrNoRows) {
				return fmt.Errorf("finding product by externalId: %w", err)
			}
		}
		sets := productSets(w)
		cols := []string{"tenant_id"}
		vals := []string{"$1"}
		args := []any{tenantID}
		for _, s := range sets {
			args = append(args, s.Value)
			cols = append(cols, s.Column)
			vals = append(vals, fmt.Sprintf("$%d", len(args)))
		}
		var id string
		err := tx.QueryRow(ctx, `INSERT INTO products (`+strings.Join(cols, ", ")+`) VALUES (`+strings.Join(vals, ", ")+`) RETURNING id`, args...).Scan(&id)
		if e := externalIDConflict(err); e != nil {
			return e
		}
		if err != nil {
			return fmt.Errorf("inserting product: %w", err)
		}
		created = true
		p, err = product(ctx, tx, tenantID, id)
		return err
	})
	return p, created, err
}

// UpdateProduct applies a partial update.
func (d *Business) UpdateProduct(ctx context.Context, tenantID, id string, w ProductWrite) (parley.Product, error) {
	if !pgbase.LooksLikeUUID(id) {
		return parley.Product{}, parley.Errorf(parley.KindNotFound, "Product not found")
	}
	var p parley.Product
	err := pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		var err error
		p, err = updateProduct(ctx, tx, tenantID, id, w)
		return err
	})
	return p, err
}

func updateProduct(ctx context.Context, tx pgx.Tx, tenantID, id string, w ProductWrite) (parley.Product, error) {
	err := pgbase.UpdateTenantRow(ctx, tx, "products", "Product", tenantID, id, productSets(w))
	if e := externalIDConflict(err); e != nil {
		return parley.Product{}, e
	}
	if err != nil {
		return parley.Product{}, fmt.Errorf("updating product: %w", err)
	}
	return product(ctx, tx, tenantID, id)
}

// DeleteProduct deletes one of the tenant's products.
func (d *Business) DeleteProduct(ctx context.Context, tenantID, id string) error {
	return pgbase.DeleteTenantRow(ctx, d.pool, "products", "Product", tenantID, id)
}

// HasActiveProducts reports whether the tenant has at least one active
// product: the chat offers RECOMMEND_PRODUCT only then.
func (d *Business) HasActiveProducts(ctx context.Context, tenantID string) (bool, error) {
	var found bool
	if err := d.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM products WHERE tenant_id = $1 AND is_active)`, tenantID).Scan(&found); err != nil {
		return false, fmt.Errorf("checking for products: %w", err)
	}
	return found, nil
}

// SearchProducts returns the tenant's active products matching query, best
// first, at most limit: RECOMMEND_PRODUCT's search.
func (d *Business) SearchProducts(ctx context.Context, tenantID, query string, limit int) ([]parley.Product, error) {
	q := ProductQuery{Search: query, ActiveOnly: true, Page: 1, Limit: limit}
	where, order, args := productFilter(tenantID, q)
	return d.productPage(ctx, where, order, args, q)
}
