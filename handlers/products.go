package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/db"
)

// Product limits, chosen here and documented in the OpenAPI document.
const (
	maxProductName        = 255
	maxProductDescription = 5000
	maxProductExternalID  = 255
	maxProductPrice       = 1e9
	maxProductsBulk       = 100
	maxProductsPage       = 100
	defaultProductsPage   = 20
)

var currencyCode = regexp.MustCompile(`^[A-Z]{3}$`)

type productBody struct {
	ExternalID  parley.Opt[string]   `json:"externalId"`
	Name        parley.Opt[string]   `json:"name"`
	Description parley.Opt[string]   `json:"description"`
	Price       parley.Opt[float64]  `json:"price"`
	Currency    parley.Opt[string]   `json:"currency"`
	URL         parley.Opt[string]   `json:"url"`
	ImageURL    parley.Opt[string]   `json:"imageUrl"`
	Tags        parley.Opt[[]string] `json:"tags"`
	IsActive    parley.Opt[bool]     `json:"isActive"`
}

type productJSON struct {
	ID          string    `json:"id"`
	ExternalID  *string   `json:"externalId"`
	Name        string    `json:"name"`
	Description *string   `json:"description"`
	Price       *float64  `json:"price"`
	Currency    *string   `json:"currency"`
	URL         *string   `json:"url"`
	ImageURL    *string   `json:"imageUrl"`
	Tags        []string  `json:"tags"`
	IsActive    bool      `json:"isActive"`
	CreatedAt   time.Time `json:"createdAt"`
	UpdatedAt   time.Time `json:"updatedAt"`
}

func newProductJSON(p parley.Product) productJSON {
	return productJSON{ID: p.ID, ExternalID: p.ExternalID, Name: p.Name, Description: p.Description, Price: p.Price,
		Currency: p.Currency, URL: p.URL, ImageURL: p.ImageURL, Tags: p.Tags, IsActive: p.IsActive,
		CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt}
}

// validateProduct checks a product body; cur is the stored product on update (nil on create).
func validateProduct(b productBody, cur *parley.Product) (db.ProductWrite, parley.FieldErrors) {
	errs := parley.FieldErrors{}
	if b.ExternalID.Set && !b.ExternalID.Null {
		b.ExternalID.Value = strings.TrimSpace(b.ExternalID.Value)
	}
	for _, o := range []*parley.Opt[string]{&b.ExternalID, &b.Description, &b.Currency, &b.URL, &b.ImageURL} {
		parley.NullIfEmpty(o)
	}
	if cur == nil && !b.Name.Set {
		errs.Add("name", "is required")
	} else if parley.NotNull(errs, "name", b.Name) {
		b.Name.Value = strings.TrimSpace(b.Name.Value)
		if b.Name.Value == "" {
			errs.Add("name", "must not be empty")
		}
		parley.CheckLen(errs, "name", b.Name, maxProductName)
	}
	parley.CheckLen(errs, "externalId", b.ExternalID, maxProductExternalID)
	parley.CheckLen(errs, "description", b.Description, maxProductDescription)
	if b.Price.Set && !b.Price.Null {
		cents := b.Price.Value * 100
		if b.Price.Value < 0 || b.Price.Value > maxProductPrice || math.Abs(cents-math.Round(cents)) > 1e-6 {
			errs.Add("price", "must be between 0 and 1000000000 with at most two decimals")
		}
	}
	if b.Currency.Set && !b.Currency.Null {
		b.Currency.Value = strings.ToUpper(b.Currency.Value)
		if !currencyCode.MatchString(b.Currency.Value) {
			errs.Add("currency", "must be an ISO 4217 code such as EUR or USD")
		}
	}
	hasPrice := cur != nil && cur.Price != nil
	if b.Price.Set {
		hasPrice = !b.Price.Null
	}
	hasCurrency := cur != nil && cur.Currency != nil
	if b.Currency.Set {
		hasCurrency = !b.Currency.Null
	}
	if hasPrice && !hasCurrency {
		errs.Add("currency", "is required with a price")
	}
	parley.CheckHTTPURL(errs, "url", b.URL, false)
	parley.CheckHTTPURL(errs, "imageUrl", b.ImageURL, false)
	parley.NormalizeTags(errs, &b.Tags)
	parley.NotNull(errs, "isActive", b.IsActive)
	return db.ProductWrite{ExternalID: b.ExternalID, Name: b.Name, Description: b.Description, Price: b.Price,
		Currency: b.Currency, URL: b.URL, ImageURL: b.ImageURL, Tags: b.Tags, IsActive: b.IsActive}, errs
}

// ListProducts answers GET /tenants/{slug}/products.
func (h *Handler) ListProducts(c echo.Context) error {
	page, err := intParam(c, "page", 1, 1, parley.MaxPage)
	if err != nil {
		return err
	}
	limit, err := intParam(c, "limit", defaultProductsPage, 1, maxProductsPage)
	if err != nil {
		return err
	}
	q := db.ProductQuery{Page: page, Limit: limit, Search: strings.TrimSpace(c.QueryParam("search"))}
	if utf8.RuneCountInString(q.Search) > 200 {
		return invalid("search must be at most 200 characters")
	}
	if v := c.QueryParam("isActive"); v != "" {
		active, err := strconv.ParseBool(v)
		if err != nil || !active {
			return invalid("isActive must be true (omit it to list every product)")
		}
		q.ActiveOnly = true
	}
	ps, total, err := h.DB.ListProducts(c.Request().Context(), tenantFrom(c).ID, q)
	if err != nil {
		return err
	}
	out := make([]productJSON, len(ps))
	for i, p := range ps {
		out[i] = newProductJSON(p)
	}
	return c.JSON(http.StatusOK, map[string]any{
		"products":   out,
		"pagination": map[string]int{"page": page, "limit": limit, "total": total, "pages": (total + limit - 1) / limit},
	})
}

// ShowProduct answers GET /tenants/{slug}/products/{id}.
func (h *Handler) ShowProduct(c echo.Context) error {
	p, err := h.DB.Product(c.Request().Context(), tenantFrom(c).ID, c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, newProductJSON(p))
}

// CreateProduct answers POST /tenants/{slug}/products; with an existing
// externalId it updates that product and answers 200.
func (h *Handler) CreateProduct(c echo.Context) error {
	raw, err := decodeObject(c, maxJSONBody)
	if err != nil {
		return err
	}
	var b productBody
	errs := decodeFields(raw, &b)
	p, created, err := h.upsertProduct(c.Request().Context(), tenantFrom(c).ID, b, errs)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	return c.JSON(status, newProductJSON(p))
}

func (h *Handler) upsertProduct(ctx context.Context, tenantID string, b productBody, errs parley.FieldErrors) (parley.Product, bool, error) {
	var cur *parley.Product
	if ext := strings.TrimSpace(b.ExternalID.Value); b.ExternalID.Set && !b.ExternalID.Null && ext != "" {
		p, err := h.DB.ProductByExternalID(ctx, tenantID, ext)
		switch {
		case err == nil:
			cur = &p
		case parley.ErrorKind(err) != parley.KindNotFound:
			return parley.Product{}, false, err
		}
	}
	w, verrs := validateProduct(b, cur)
	for k, v := range verrs {
		errs.Add(k, v)
	}
	if err := errs.Err(); err != nil {
		return parley.Product{}, false, err
	}
	return h.DB.UpsertProduct(ctx, tenantID, w)
}

// UpdateProduct answers PATCH and PUT /tenants/{slug}/products/{id}: only sent fields change.
func (h *Handler) UpdateProduct(c echo.Context) error {
	ctx := c.Request().Context()
	cur, err := h.DB.Product(ctx, tenantFrom(c).ID, c.Param("id"))
	if err != nil {
		return err
	}
	raw, err := decodeObject(c, maxJSONBody)
	if err != nil {
		return err
	}
	var b productBody
	errs := decodeFields(raw, &b)
	w, verrs := validateProduct(b, &cur)
	for k, v := range verrs {
		errs.Add(k, v)
	}
	if err := errs.Err(); err != nil {
		return err
	}
	p, err := h.DB.UpdateProduct(ctx, cur.TenantID, cur.ID, w)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, newProductJSON(p))
}

// DeleteProduct answers DELETE /tenants/{slug}/products/{id}.
func (h *Handler) DeleteProduct(c echo.Context) error {
	return deleteOne(c, "id", h.DB.DeleteProduct)
}

// BulkProducts answers POST /tenants/{slug}/products/bulk: {products: 1..100},
// each upserted by its required externalId in its own transaction.
func (h *Handler) BulkProducts(c echo.Context) error {
	raw, err := decodeObject(c, maxBulkBody)
	if err != nil {
		return err
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw["products"], &items); err != nil || raw["products"] == nil || len(items) < 1 || len(items) > maxProductsBulk {
		return &parley.Error{Kind: parley.KindInvalid, Message: fmt.Sprintf("products must be an array of 1 to %d products", maxProductsBulk),
			Details: map[string]string{"products": fmt.Sprintf("1 to %d products", maxProductsBulk)}}
	}
	ctx := c.Request().Context()
	tenantID := tenantFrom(c).ID
	out := struct {
		Created int         `json:"created"`
		Updated int         `json:"updated"`
		Errors  []bulkError `json:"errors"`
	}{Errors: []bulkError{}}
	seen := map[string]bool{}
	for i, item := range items {
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(item, &fields); err != nil {
			out.Errors = append(out.Errors, bulkError{Index: i, Reason: fmt.Sprintf("product %d is not a JSON object", i+1)})
			continue
		}
		var b productBody
		errs := decodeFields(fields, &b)
		ext := strings.TrimSpace(b.ExternalID.Value)
		if ext == "" {
			errs.Add("externalId", "is required in bulk")
		} else if seen[ext] {
			errs.Add("externalId", "appears twice in this request")
		}
		seen[ext] = true
		if len(errs) > 0 {
			out.Errors = append(out.Errors, bulkError{Index: i, ExternalID: ext, Reason: reason(errs)})
			continue
		}
		_, created, err := h.upsertProduct(ctx, tenantID, b, errs)
		var appErr *parley.Error
		switch {
		case errors.As(err, &appErr) && appErr.Kind == parley.KindInvalid:
			fe, _ := appErr.Details.(map[string]string)
			out.Errors = append(out.Errors, bulkError{Index: i, ExternalID: ext, Reason: reason(fe)})
		case err != nil && parley.ErrorKind(err) != parley.KindInternal:
			out.Errors = append(out.Errors, bulkError{Index: i, ExternalID: ext, Reason: err.Error()})
		case err != nil:
			return err
		case created:
			out.Created++
		default:
			out.Updated++
		}
	}
	return c.JSON(http.StatusOK, out)
}
