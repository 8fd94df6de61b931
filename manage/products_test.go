package manage_test

import (
	"strings"
	"testing"

	"github.com/parley/parley"
	"github.com/parley/parley/manage"
)

// CheckProduct: the product's rules at their limits and one past, the
// price and its currency against the stored product, and the problems
// read by the surface first.
func TestCheckProduct(t *testing.T) {
	t.Parallel()
	ok := func() parley.ProductInput {
		return parley.ProductInput{Name: parley.Some("  Office chair "), Price: parley.Some(49.9), Currency: parley.Some("eur")}
	}
	long := func(n int) parley.Opt[string] { return parley.Some(strings.Repeat("x", n)) }
	for name, c := range map[string]struct {
		edit    func(*parley.ProductInput)
		field   string
		problem string
	}{
		"NameAtLimit":          {func(in *parley.ProductInput) { in.Name = long(parley.MaxProductName) }, "", ""},
		"NamePastLimit":        {func(in *parley.ProductInput) { in.Name = long(parley.MaxProductName + 1) }, "name", "at most 255"},
		"NoName":               {func(in *parley.ProductInput) { in.Name = parley.Opt[string]{} }, "name", "is required"},
		"BlankName":            {func(in *parley.ProductInput) { in.Name = parley.Some("  ") }, "name", "must not be empty"},
		"NullName":             {func(in *parley.ProductInput) { in.Name = parley.Opt[string]{Set: true, Null: true} }, "name", "must not be null"},
		"DescriptionAtLimit":   {func(in *parley.ProductInput) { in.Description = long(parley.MaxProductDescription) }, "", ""},
		"DescriptionPastLimit": {func(in *parley.ProductInput) { in.Description = long(parley.MaxProductDescription + 1) }, "description", "at most 5000"},
		"ExternalIDAtLimit":    {func(in *parley.ProductInput) { in.ExternalID = long(parley.MaxProductExternalID) }, "", ""},
		"ExternalIDPastLimit":  {func(in *parley.ProductInput) { in.ExternalID = long(parley.MaxProductExternalID + 1) }, "externalId", "at most 255"},
		"PriceAtLimit":         {func(in *parley.ProductInput) { in.Price = parley.Some(parley.MaxProductPrice) }, "", ""},
		"PricePastLimit":       {func(in *parley.ProductInput) { in.Price = parley.Some(parley.MaxProductPrice + 0.01) }, "price", "between 0 and 1000000000"},
		"NegativePrice":        {func(in *parley.ProductInput) { in.Price = parley.Some(-0.01) }, "price", "between 0 and 1000000000"},
		"ThreeDecimals":        {func(in *parley.ProductInput) { in.Price = parley.Some(1.005) }, "price", "at most two decimals"},
		"FreeProduct":          {func(in *parley.ProductInput) { in.Price = parley.Some(0.0) }, "", ""},
		"BadCurrency":          {func(in *parley.ProductInput) { in.Currency = parley.Some("euro") }, "currency", "ISO 4217"},
		"PriceWithoutCurrency": {func(in *parley.ProductInput) { in.Currency = parley.Opt[string]{} }, "currency", "is required with a price"},
		"BlankCurrency":        {func(in *parley.ProductInput) { in.Currency = parley.Some(" ") }, "currency", "is required with a price"},
		"NoPriceNoCurrency":    {func(in *parley.ProductInput) { in.Price, in.Currency = parley.Opt[float64]{}, parley.Opt[string]{} }, "", ""},
		"BadURL":               {func(in *parley.ProductInput) { in.URL = parley.Some("shop/chair") }, "url", "absolute URL"},
		"URLPastLimit": {func(in *parley.ProductInput) {
			in.URL = parley.Some("https://example.com/" + strings.Repeat("p", parley.MaxURL))
		}, "url", "at most 500"},
		"BadImageURL":  {func(in *parley.ProductInput) { in.ImageURL = parley.Some("ftp://example.com/a.png") }, "imageUrl", "absolute URL"},
		"TagPastLimit": {func(in *parley.ProductInput) { in.Tags = parley.Some([]string{strings.Repeat("t", parley.MaxTag+1)}) }, "tags", "at most 50"},
		"NullActive":   {func(in *parley.ProductInput) { in.IsActive = parley.Opt[bool]{Set: true, Null: true} }, "isActive", "must not be null"},
		"ReadProblemFirst": {func(in *parley.ProductInput) {
			in.Problems = parley.FieldErrors{"price": "must be a number such as 49.90"}
			in.Price = parley.Some(-1.0)
		}, "price", "must be a number"},
	} {
		in := ok()
		c.edit(&in)
		_, errs := manage.CheckProduct(in, nil)
		if c.field == "" {
			if len(errs) != 0 {
				t.Errorf("%s: %v", name, errs)
			}
			continue
		}
		if !strings.Contains(errs[c.field], c.problem) {
			t.Errorf("%s: %s is %q, want %q (all: %v)", name, c.field, errs[c.field], c.problem, errs)
		}
	}

	in := ok()
	in.ExternalID, in.Description, in.URL = parley.Some(" sku-1 "), parley.Some(" "), parley.Some("")
	in.Tags = parley.Some([]string{" office ", "office", "", "chair"})
	w, errs := manage.CheckProduct(in, nil)
	if len(errs) != 0 || w.Name.Value != "Office chair" || w.ExternalID.Value != "sku-1" || w.Currency.Value != "EUR" ||
		!w.Description.Null || !w.URL.Null || strings.Join(w.Tags.Value, ",") != "office,chair" {
		t.Errorf("normalised write %+v (%v)", w, errs)
	}
	// Too many tags after deduplication.
	in = ok()
	tags := make([]string, parley.MaxTags+1)
	for i := range tags {
		tags[i] = strings.Repeat("x", i+1)
	}
	in.Tags = parley.Some(tags[:parley.MaxTags])
	if _, errs := manage.CheckProduct(in, nil); len(errs) != 0 {
		t.Errorf("%d tags: %v", parley.MaxTags, errs)
	}
	in.Tags = parley.Some(tags)
	if _, errs := manage.CheckProduct(in, nil); !strings.Contains(errs["tags"], "at most 20") {
		t.Errorf("%d tags: %v", len(tags), errs)
	}

	// Against a stored product: no name needed; a price needs a currency,
	// sent or stored.
	eur, price := "EUR", 10.0
	priced := &parley.Product{ID: "p-1", Name: "Chair", Price: &price, Currency: &eur}
	unpriced := &parley.Product{ID: "p-2", Name: "Desk"}
	for name, c := range map[string]struct {
		in      parley.ProductInput
		cur     *parley.Product
		problem string // of currency; "" for none at all
	}{
		"PartialUpdate":        {parley.ProductInput{IsActive: parley.Some(false)}, unpriced, ""},
		"PriceStoredCurrency":  {parley.ProductInput{Price: parley.Some(12.5)}, priced, ""},
		"PriceNoCurrency":      {parley.ProductInput{Price: parley.Some(12.5)}, unpriced, "is required with a price"},
		"ClearCurrency":        {parley.ProductInput{Currency: parley.Opt[string]{Set: true, Null: true}}, priced, "is required with a price"},
		"ClearBoth":            {parley.ProductInput{Price: parley.Opt[float64]{Set: true, Null: true}, Currency: parley.Some("")}, priced, ""},
		"CurrencyWithoutPrice": {parley.ProductInput{Currency: parley.Some("usd")}, unpriced, ""},
	} {
		w, errs := manage.CheckProduct(c.in, c.cur)
		if c.problem == "" && len(errs) != 0 {
			t.Errorf("%s: %v", name, errs)
		}
		if c.problem != "" && errs["currency"] != c.problem {
			t.Errorf("%s: currency is %q, want %q (all: %v)", name, errs["currency"], c.problem, errs)
		}
		if w.Name.Set {
			t.Errorf("%s: an update without a name sets it: %+v", name, w.Name)
		}
	}
}
