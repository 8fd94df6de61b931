package tools

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/db/business"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/admin/dash"
	"github.com/parley/parley/views"
)

// adminProductsPage is the length of a page of the dashboard's catalog.
const adminProductsPage = 20

func productRow(p parley.Product) views.ProductRow {
	r := views.ProductRow{ID: p.ID, Name: p.Name, Tags: p.Tags, Active: p.IsActive}
	if p.Price != nil {
		r.Price = strconv.FormatFloat(*p.Price, 'f', 2, 64) + " " + handlers.Deref(p.Currency)
	}
	return r
}

func productForm(p parley.Product) views.ProductForm {
	f := views.ProductForm{ID: p.ID, Name: p.Name, Description: handlers.Deref(p.Description), Currency: handlers.Deref(p.Currency),
		URL: handlers.Deref(p.URL), ImageURL: handlers.Deref(p.ImageURL), Tags: strings.Join(p.Tags, ", "), Active: p.IsActive}
	if p.Price != nil {
		f.Price = formatNumber(*p.Price)
	}
	return f
}

// ShowProductsPage lists the catalog with a search and pages; htmx gets the list alone.
func (h *Tools) ShowProductsPage(c echo.Context) error {
	l := views.ProductsList{Search: strings.TrimSpace(c.QueryParam("search")), Page: 1}
	if n, err := strconv.Atoi(c.QueryParam("page")); err == nil && n > 1 {
		l.Page = n
	}
	ps, total, err := h.Manage.ListProducts(c.Request().Context(), dash.AdminFrom(c).Tenant.ID,
		business.ProductQuery{Search: l.Search, Page: l.Page, Limit: adminProductsPage})
	if err != nil {
		return err
	}
	l.Total, l.Pages = total, (total+adminProductsPage-1)/adminProductsPage
	for _, p := range ps {
		l.Products = append(l.Products, productRow(p))
	}
	p := dash.Page(c, h.Sessions, "Products", "products")
	if dash.IsHTMX(c) {
		return handlers.Render(c, http.StatusOK, views.ProductsListView(p, l))
	}
	return handlers.Render(c, http.StatusOK, views.ProductsPage(p, l))
}

// ShowNewProductPage renders the create form.
func (h *Tools) ShowNewProductPage(c echo.Context) error {
	return handlers.Render(c, http.StatusOK, views.ProductFormPage(dash.Page(c, h.Sessions, "New product", "products"), views.ProductForm{Active: true}))
}

// productFromForm reads a product form into the management operations'
// input: every field is sent; a price that is not a number is its problem.
func productFromForm(c echo.Context) (parley.ProductInput, views.ProductForm, error) {
	form, err := c.FormParams()
	if err != nil {
		return parley.ProductInput{}, views.ProductForm{}, handlers.Invalid("Could not read the form")
	}
	get := func(k string) string { return strings.TrimSpace(form.Get(k)) }
	f := views.ProductForm{Name: form.Get("name"), Description: form.Get("description"), Price: get("price"),
		Currency: get("currency"), URL: get("url"), ImageURL: get("imageUrl"), Tags: form.Get("tags"),
		Active: form.Get("isActive") == "true"}
	in := parley.ProductInput{Name: parley.Some(f.Name), Description: parley.Some(f.Description), Currency: parley.Some(f.Currency),
		URL: parley.Some(f.URL), ImageURL: parley.Some(f.ImageURL), Tags: parley.Some(strings.Split(f.Tags, ",")), IsActive: parley.Some(f.Active),
		Problems: parley.FieldErrors{}}
	if f.Price == "" {
		in.Price = parley.Opt[float64]{Set: true, Null: true}
	} else if v, err := strconv.ParseFloat(f.Price, 64); err != nil {
		in.Problems.Add("price", "must be a number such as 49.90")
	} else {
		in.Price = parley.Some(v)
	}
	return in, f, nil
}

// saveProductForm saves a product form through the management operations
// (the API's rules), or re-renders the form with the errors.
func (h *Tools) saveProductForm(c echo.Context, cur *parley.Product) error {
	a := dash.AdminFrom(c)
	ctx := c.Request().Context()
	in, f, err := productFromForm(c)
	if err != nil {
		return err
	}
	var p parley.Product
	if cur == nil {
		p, _, err = h.Manage.CreateProduct(ctx, a.Tenant, in) // no externalId: always a new product
	} else {
		p, err = h.Manage.UpdateProduct(ctx, *cur, in)
	}
	if err == nil {
		h.Sessions.Put(ctx, dash.SessFlash, fmt.Sprintf("Product %s saved.", p.Name))
		return c.Redirect(http.StatusSeeOther, "/admin/products")
	}
	fe, status, ok := dash.FailedForm(err)
	if !ok {
		return err
	}
	f.Errors = fe
	title := "New product"
	if cur != nil {
		f.ID, title = cur.ID, "Edit product"
	}
	return handlers.Render(c, status, views.ProductFormPage(dash.Page(c, h.Sessions, title, "products"), f))
}

// SaveNewProduct creates a product from the form.
func (h *Tools) SaveNewProduct(c echo.Context) error { return h.saveProductForm(c, nil) }

// ShowEditProductPage renders a product's edit form.
func (h *Tools) ShowEditProductPage(c echo.Context) error {
	p, err := h.Manage.Product(c.Request().Context(), dash.AdminFrom(c).Tenant.ID, c.Param("id"))
	if err != nil {
		return err
	}
	return handlers.Render(c, http.StatusOK, views.ProductFormPage(dash.Page(c, h.Sessions, "Edit product", "products"), productForm(p)))
}

// SaveProduct saves a product's edit form.
func (h *Tools) SaveProduct(c echo.Context) error {
	p, err := h.Manage.Product(c.Request().Context(), dash.AdminFrom(c).Tenant.ID, c.Param("id"))
	if err != nil {
		return err
	}
	return h.saveProductForm(c, &p)
}

// RemoveProduct deletes a product; htmx gets an empty answer that removes the row.
func (h *Tools) RemoveProduct(c echo.Context) error {
	ctx := c.Request().Context()
	if err := h.Manage.DeleteProduct(ctx, dash.AdminFrom(c).Tenant.ID, c.Param("id")); err != nil {
		return err
	}
	if dash.IsHTMX(c) {
		return c.HTML(http.StatusOK, "")
	}
	h.Sessions.Put(ctx, dash.SessFlash, "Product deleted.")
	return c.Redirect(http.StatusSeeOther, "/admin/products")
}
