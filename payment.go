package parley

import (
	"fmt"
	"math"
	"regexp"
	"strings"
	"time"
)

// PaymentConnector is a tenant's Stripe connection. The key stays sealed:
// only its mode, type and last 4 characters are ever shown.
type PaymentConnector struct {
	TenantID  string
	SealedKey []byte
	KeyMode   string // StripeModeTest or StripeModeLive
	KeyType   string // StripeKeySecret or StripeKeyRestricted
	KeyLast4  string
	IsActive  bool
	// Currency (lowercase ISO 4217) and DefaultAmount (in its smallest
	// unit) are the fixed amount charged when no quote applies; both or
	// neither.
	Currency           *string
	DefaultAmount      *int64
	DefaultDescription *string
	SuccessMessage     *string
	// The last connection test.
	CheckedAt    *time.Time
	CheckOK      *bool
	CheckMessage *string
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// Stripe key modes and types.
const (
	StripeModeTest      = "test"
	StripeModeLive      = "live"
	StripeKeySecret     = "secret"
	StripeKeyRestricted = "restricted"
)

// Payment limits, shared by the API, the dashboard and the tool.
const (
	MaxStripeKey             = 255
	MaxPaymentDescription    = 200
	MaxPaymentSuccessMessage = 500 // Stripe's limit on a payment link's confirmation message
	// MaxPaymentMinor is the largest amount one payment link charges, in
	// the currency's smallest unit: Stripe's limit of 8 digits.
	MaxPaymentMinor = 99_999_999
)

// stripeKeyPattern is a key's shape; its length is bounded by MaxStripeKey
// (the 8 characters of the prefix included), not here.
var stripeKeyPattern = regexp.MustCompile(`^(sk|rk)_(test|live)_[0-9A-Za-z]{8,}$`)

// ParseStripeKey checks the shape of a Stripe secret or restricted key and
// says its mode and type; the message of a refused key never repeats it.
func ParseStripeKey(key string) (mode, typ string, err error) {
	m := stripeKeyPattern.FindStringSubmatch(key)
	switch {
	case len(key) > MaxStripeKey:
		return "", "", fmt.Errorf("must be at most %d characters", MaxStripeKey)
	case m != nil:
	case strings.HasPrefix(key, "pk_"):
		return "", "", fmt.Errorf("is a publishable key (pk_...); use a secret key (sk_...) or a restricted key (rk_...)")
	default:
		return "", "", fmt.Errorf("must be a Stripe secret key (sk_test_... or sk_live_...) or restricted key (rk_test_... or rk_live_...)")
	}
	typ = StripeKeySecret
	if m[1] == "rk" {
		typ = StripeKeyRestricted
	}
	return m[2], typ, nil
}

// KeyLast4 is the part of a key that may be shown.
func KeyLast4(key string) string {
	if len(key) < 4 {
		return ""
	}
	return key[len(key)-4:]
}

// stripeCurrencies are the currencies Stripe charges in, with the number of
// decimals of their smallest unit as Stripe counts them
// (https://docs.stripe.com/currencies): zero-decimal currencies are charged
// in whole units, three-decimal ones in thousandths.
var stripeCurrencies = map[string]int{
	"usd": 2, "aed": 2, "afn": 2, "all": 2, "amd": 2, "ang": 2, "aoa": 2, "ars": 2, "aud": 2, "awg": 2,
	"azn": 2, "bam": 2, "bbd": 2, "bdt": 2, "bgn": 2, "bhd": 3, "bif": 0, "bmd": 2, "bnd": 2, "bob": 2,
	"brl": 2, "bsd": 2, "bwp": 2, "byn": 2, "bzd": 2, "cad": 2, "cdf": 2, "chf": 2, "clp": 0, "cny": 2,
	"cop": 2, "crc": 2, "cve": 2, "czk": 2, "djf": 0, "dkk": 2, "dop": 2, "dzd": 2, "egp": 2, "etb": 2,
	"eur": 2, "fjd": 2, "fkp": 2, "gbp": 2, "gel": 2, "gip": 2, "gmd": 2, "gnf": 0, "gtq": 2, "gyd": 2,
	"hkd": 2, "hnl": 2, "htg": 2, "huf": 2, "idr": 2, "ils": 2, "inr": 2, "isk": 2, "jmd": 2, "jod": 3,
	"jpy": 0, "kes": 2, "kgs": 2, "khr": 2, "kmf": 0, "krw": 0, "kwd": 3, "kyd": 2, "kzt": 2, "lak": 2,
	"lbp": 2, "lkr": 2, "lrd": 2, "lsl": 2, "mad": 2, "mdl": 2, "mga": 0, "mkd": 2, "mmk": 2, "mnt": 2,
	"mop": 2, "mur": 2, "mvr": 2, "mwk": 2, "mxn": 2, "myr": 2, "mzn": 2, "nad": 2, "ngn": 2, "nio": 2,
	"nok": 2, "npr": 2, "nzd": 2, "omr": 3, "pab": 2, "pen": 2, "pgk": 2, "php": 2, "pkr": 2, "pln": 2,
	"pyg": 0, "qar": 2, "ron": 2, "rsd": 2, "rub": 2, "rwf": 0, "sar": 2, "sbd": 2, "scr": 2, "sek": 2,
	"sgd": 2, "shp": 2, "sle": 2, "sos": 2, "srd": 2, "szl": 2, "thb": 2, "tjs": 2, "tnd": 3, "top": 2,
	"try": 2, "ttd": 2, "twd": 2, "tzs": 2, "uah": 2, "ugx": 0, "uyu": 2, "uzs": 2, "vnd": 0, "vuv": 0,
	"wst": 2, "xaf": 0, "xcd": 2, "xof": 0, "xpf": 0, "yer": 2, "zar": 2, "zmw": 2,
}

// PaymentCurrency normalizes an ISO 4217 code to Stripe's lowercase form and
// returns its decimals; ok is false for a currency Stripe does not charge in.
func PaymentCurrency(code string) (currency string, decimals int, ok bool) {
	currency = strings.ToLower(strings.TrimSpace(code))
	decimals, ok = stripeCurrencies[currency]
	return currency, decimals, ok
}

// MinorUnits converts an amount in major units (49.5 EUR) to the currency's
// smallest unit (4950); ok is false when it has more decimals than the
// currency, or is not positive, or is above MaxPaymentMinor.
func MinorUnits(amount float64, decimals int) (int64, bool) {
	scaled := amount * math.Pow10(decimals)
	minor := math.Round(scaled)
	if math.IsNaN(amount) || amount <= 0 || math.Abs(scaled-minor) > 1e-6 || minor > MaxPaymentMinor {
		return 0, false
	}
	return int64(minor), true
}

// MajorUnits is the amount of minor units in major units (4950 → 49.5).
func MajorUnits(minor int64, decimals int) float64 {
	return float64(minor) / math.Pow10(decimals)
}

// FormatMinor writes minor units as a decimal amount: 4950, 2 → "49.50".
func FormatMinor(minor int64, decimals int) string {
	if decimals == 0 {
		return fmt.Sprintf("%d", minor)
	}
	p := int64(math.Pow10(decimals))
	return fmt.Sprintf("%d.%0*d", minor/p, decimals, minor%p)
}
