package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/db/business"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/jsonbody"
)

// The catalog's REST limits beyond the product's own (parley.MaxProduct*):
// a bulk request's products, a page, a search.
const (
	maxProductsBulk     = 100
	maxProductsPage     = 100
	defaultProductsPage = 20
	maxProductsSearch   = 200
)

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

// productInput decodes the fields of a product write: the REST body.
func productInput(raw map[string]json.RawMessage) parley.ProductInput {
	var in parley.ProductInput
	in.Problems = jsonbody.DecodeFields(raw, &in)
	return in
}

// ListProducts answers GET /tenants/{slug}/products.
func (h *Tools) ListProducts(c echo.Context) error {
	page, err := handlers.IntParam(c, "page", 1, 1, parley.MaxPage)
	if err != nil {
		return err
	}
	limit, err := handlers.IntParam(c, "limit", defaultProductsPage, 1, maxProductsPage)
	if err != nil {
		return err
	}
	q := business.ProductQuery{Page: page, Limit: limit, Search: strings.TrimSpace(c.QueryParam("search"))}
	if utf8.RuneCountInString(q.Search) > maxProductsSearch {
		return handlers.Invalid("search must be at most %d characters", maxProductsSearch)
	}
	if v := c.QueryParam("isActive"); v != "" {
		active, err := strconv.ParseBool(v)
		if err != nil || !active {
			return handlers.Invalid("isActive must be true (omit it to list every product)")
		}
		q.ActiveOnly = true
	}
	ps, total, err := h.Manage.ListProducts(c.Request().Context(), handlers.TenantFrom(c).ID, q)
	if err != nil {
		return err
	}
	out := make([]productJSON, len(ps))
	for i, p := range ps {
		out[i] = newProductJSON(p)
	}
	return c.JSON(http.StatusOK, productListJSON{Products: out, Pagination: newPaginationJSON(page, limit, total)})
}

// productListJSON is what GET /tenants/{slug}/products answers.
type productListJSON struct {
	Products   []productJSON  `json:"products"`
	Pagination paginationJSON `json:"pagination"`
}

// ShowProduct answers GET /tenants/{slug}/products/{id}.
func (h *Tools) ShowProduct(c echo.Context) error {
	p, err := h.Manage.Product(c.Request().Context(), handlers.TenantFrom(c).ID, c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, newProductJSON(p))
}

// CreateProduct answers POST /tenants/{slug}/products; with an existing
// externalId it updates that product and answers 200.
func (h *Tools) CreateProduct(c echo.Context) error {
	raw, err := jsonbody.DecodeObject(c, jsonbody.MaxJSONBody)
	if err != nil {
		return err
	}
	p, created, err := h.Manage.CreateProduct(c.Request().Context(), handlers.TenantFrom(c), productInput(raw))
	if err != nil {
		return err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	return c.JSON(status, newProductJSON(p))
}

// UpdateProduct answers PATCH and PUT /tenants/{slug}/products/{id}: only sent fields change.
func (h *Tools) UpdateProduct(c echo.Context) error {
	ctx := c.Request().Context()
	// Read before the body: a missing product is a 404 whatever the body,
	// and the write is checked against the stored price and currency.
	cur, err := h.Manage.Product(ctx, handlers.TenantFrom(c).ID, c.Param("id"))
	if err != nil {
		return err
	}
	raw, err := jsonbody.DecodeObject(c, jsonbody.MaxJSONBody)
	if err != nil {
		return err
	}
	p, err := h.Manage.UpdateProduct(ctx, cur, productInput(raw))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, newProductJSON(p))
}

// DeleteProduct answers DELETE /tenants/{slug}/products/{id}.
func (h *Tools) DeleteProduct(c echo.Context) error {
	return handlers.DeleteOne(c, "id", h.Manage.DeleteProduct)
}

// productBulkReport is the answer of POST /tenants/{slug}/products/bulk.
type productBulkReport struct {
	Created int         `json:"created"`
	Updated int         `json:"updated"`
	Errors  []bulkError `json:"errors"`
}

// BulkProducts answers POST /tenants/{slug}/products/bulk: {products: 1..100},
// each upserted by its required externalId in its own transaction.
func (h *Tools) BulkProducts(c echo.Context) error {
	raw, err := jsonbody.DecodeObject(c, maxBulkBody)
	if err != nil {
		return err
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw["products"], &items); err != nil || raw["products"] == nil || len(items) < 1 || len(items) > maxProductsBulk {
		return &parley.Error{Kind: parley.KindInvalid, Message: fmt.Sprintf("products must be an array of 1 to %d products", maxProductsBulk),
			Details: map[string]string{"products": fmt.Sprintf("1 to %d products", maxProductsBulk)}}
	}
	ctx := c.Request().Context()
	t := handlers.TenantFrom(c)
	out := productBulkReport{Errors: []bulkError{}}
	seen := map[string]bool{}
	for i, item := range items {
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(item, &fields); err != nil {
			out.Errors = append(out.Errors, bulkError{Index: i, Reason: fmt.Sprintf("product %d is not a JSON object", i+1)})
			continue
		}
		in := productInput(fields)
		ext := strings.TrimSpace(in.ExternalID.Value)
		if ext == "" {
			in.Problems.Add("externalId", "is required in bulk")
		} else if seen[ext] {
			in.Problems.Add("externalId", "appears twice in this request")
		}
		seen[ext] = true
		// An item the decoder or the bulk rules refuse is reported alone,
		// before the product's own rules (CreateProduct's) run.
		if len(in.Problems) > 0 {
			out.Errors = append(out.Errors, bulkError{Index: i, ExternalID: ext, Reason: in.Problems.Sentence()})
			continue
		}
		_, created, err := h.Manage.CreateProduct(ctx, t, in)
		var appErr *parley.Error
		switch {
		case errors.As(err, &appErr) && appErr.Kind == parley.KindInvalid:
			fe, _ := appErr.Details.(map[string]string)
			out.Errors = append(out.Errors, bulkError{Index: i, ExternalID: ext, Reason: parley.FieldErrors(fe).Sentence()})
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
