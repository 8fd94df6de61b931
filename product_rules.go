package parley

import (
	"math"
	"regexp"
	"strings"
)

// A product's limits, chosen here and documented in the OpenAPI document
// (the tags' are Tags', the URLs' MaxURL).
const (
	MaxProductName        = 255
	MaxProductDescription = 5000
	MaxProductExternalID  = 255
	MaxProductPrice       = 1e9
)

var currencyCode = regexp.MustCompile(`^[A-Z]{3}$`)

// ProductInput is a write of a catalog product as a caller gives it,
// through any surface (its JSON is the REST API's): the fields set change.
// Problems holds what the surface could not read of it (a value of the
// wrong JSON type, a price that is not a number), reported first.
type ProductInput struct {
	ExternalID  Opt[string]   `json:"externalId"`
	Name        Opt[string]   `json:"name"`
	Description Opt[string]   `json:"description"`
	Price       Opt[float64]  `json:"price"`
	Currency    Opt[string]   `json:"currency"`
	URL         Opt[string]   `json:"url"`
	ImageURL    Opt[string]   `json:"imageUrl"`
	Tags        Opt[[]string] `json:"tags"`
	IsActive    Opt[bool]     `json:"isActive"`
	Problems    FieldErrors   `json:"-"`
}

// Check normalises in (the name and externalId trimmed, an empty optional
// text a clear, the currency upper-cased, the tags trimmed and
// deduplicated) and returns its problems, Problems first. cur is the
// stored product the write changes, nil for a new one: a new product needs
// a name, and a price needs a currency, sent or stored. (The rules depend
// on the stored product, not only on whether the write creates one: a
// create whose externalId is taken updates that product.)
func (in *ProductInput) Check(cur *Product) FieldErrors {
	errs := in.Problems.Copy()
	if in.ExternalID.Set && !in.ExternalID.Null {
		in.ExternalID.Value = strings.TrimSpace(in.ExternalID.Value)
	}
	for _, o := range []*Opt[string]{&in.ExternalID, &in.Description, &in.Currency, &in.URL, &in.ImageURL} {
		NullIfEmpty(o)
	}
	in.Name.Value = strings.TrimSpace(in.Name.Value)
	CheckText(errs, "name", in.Name, MaxProductName, cur == nil)
	CheckLen(errs, "externalId", in.ExternalID, MaxProductExternalID)
	CheckLen(errs, "description", in.Description, MaxProductDescription)
	if in.Price.Set && !in.Price.Null {
		cents := in.Price.Value * 100
		if in.Price.Value < 0 || in.Price.Value > MaxProductPrice || math.Abs(cents-math.Round(cents)) > 1e-6 {
			errs.Add("price", "must be between 0 and 1000000000 with at most two decimals")
		}
	}
	if in.Currency.Set && !in.Currency.Null {
		in.Currency.Value = strings.ToUpper(in.Currency.Value)
		if !currencyCode.MatchString(in.Currency.Value) {
			errs.Add("currency", "must be an ISO 4217 code such as EUR or USD")
		}
	}
	hasPrice := cur != nil && cur.Price != nil
	if in.Price.Set {
		hasPrice = !in.Price.Null
	}
	hasCurrency := cur != nil && cur.Currency != nil
	if in.Currency.Set {
		hasCurrency = !in.Currency.Null
	}
	if hasPrice && !hasCurrency {
		errs.Add("currency", "is required with a price")
	}
	CheckHTTPURL(errs, "url", in.URL, false)
	CheckHTTPURL(errs, "imageUrl", in.ImageURL, false)
	NormalizeTags(errs, &in.Tags)
	NotNull(errs, "isActive", in.IsActive)
	return errs
}
