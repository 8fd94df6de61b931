package tools

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/parley/parley"
	"github.com/parley/parley/agent/outbound/stripe"
)

// COLLECT_PAYMENT: the synthetic tool of the payment connector. It makes a
// Stripe payment link for an amount the service knows, never one the model
// gives: the total of a quote made in the same conversation (by its
// quoteId, else the latest), else the connector's fixed amount. It records a
// submission (no tools row: tool_id is null) and returns the link for the
// model to give the visitor. It is never offered on the voice channel.
const (
	CollectPaymentType = "COLLECT_PAYMENT"
	collectPaymentTool = "collect_payment"
	// PaymentSubmissionName is the tool name its submissions carry.
	PaymentSubmissionName = "Payment link"
)

// PaymentStore is what the payment step reads; *db.DB satisfies it.
type PaymentStore interface {
	// ActivePaymentConnector is the tenant's connector when active, else nil.
	ActivePaymentConnector(ctx context.Context, tenantID string) (*parley.PaymentConnector, error)
	// ConversationPayments are the conversation's GENERATE_QUOTE and
	// COLLECT_PAYMENT submissions, newest first.
	ConversationPayments(ctx context.Context, tenantID, conversationID string) ([]parley.Submission, error)
}

// Stripe is the engine's way to Stripe's API, for COLLECT_PAYMENT's
// payment links; *stripe.Client satisfies it.
type Stripe interface {
	CreatePaymentLink(ctx context.Context, key string, r stripe.PaymentLinkRequest) (stripe.PaymentLink, error)
}

// PaymentCollection is COLLECT_PAYMENT bound to one turn: the tenant's
// connector and opened key, and the quotes and links this turn made, which
// are stored only when the turn ends. Key is the connector's Stripe key,
// opened by the engine.
type PaymentCollection struct {
	Stripe         Stripe
	Store          PaymentStore
	Connector      parley.PaymentConnector
	Key            string
	TenantID       string
	ConversationID string
	quotes         []quoteRef // this turn's, oldest first
	links          []madeLink // this turn's
}

// quoteRef is a quote COLLECT_PAYMENT can charge.
type quoteRef struct {
	id         string
	currency   string
	totalCents int64
	validUntil string // YYYY-MM-DD
}

// madeLink is a payment link already made in the conversation.
type madeLink struct {
	source string // paymentSource of its input
	result map[string]any
}

// newQuoteID names a quote for COLLECT_PAYMENT: short enough to read out.
func newQuoteID() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return "Q-" + strings.ToUpper(hex.EncodeToString(b))
}

// noteQuote keeps a quote this turn made (the quote tool's result).
func (p *PaymentCollection) noteQuote(result map[string]any) {
	if q, ok := quoteFrom(result, ""); ok {
		p.quotes = append(p.quotes, q)
	}
}

// quoteFrom reads a quote's result; fallbackID names a stored quote made
// before quotes had ids (its submission id).
func quoteFrom(result map[string]any, fallbackID string) (quoteRef, bool) {
	q := quoteRef{id: fallbackID}
	if id, ok := result["quoteId"].(string); ok && id != "" {
		q.id = id
	}
	q.currency, _ = result["currency"].(string)
	q.validUntil, _ = result["validUntil"].(string)
	switch v := result["totalCents"].(type) {
	case int64:
		q.totalCents = v
	case json.Number:
		n, err := v.Int64()
		if err != nil {
			return q, false
		}
		q.totalCents = n
	default:
		return q, false
	}
	return q, q.id != "" && q.currency != ""
}

// decodeObjectNumbers decodes a stored JSON object keeping numbers exact.
func decodeObjectNumbers(raw json.RawMessage) map[string]any {
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if dec.Decode(&m) != nil {
		return nil
	}
	return m
}

// paymentSource names what a link charges, to find a link already made:
// "quote:<id>" or "fixed:<amount> <currency>".
func paymentSource(input map[string]any) string {
	if id, _ := input["quoteId"].(string); id != "" {
		return "quote:" + strings.ToUpper(id)
	}
	amount, _ := input["amountMinor"].(json.Number)
	if v, ok := input["amountMinor"].(int64); ok {
		amount = json.Number(fmt.Sprint(v))
	}
	currency, _ := input["currency"].(string)
	return "fixed:" + amount.String() + " " + currency
}

// minorFromCents converts a quote's total, in hundredths, to the smallest
// unit of its currency; ok is false when it cannot be charged exactly (a
// fraction of a yen).
func minorFromCents(cents int64, decimals int) (int64, bool) {
	switch decimals {
	case 0:
		return cents / 100, cents%100 == 0
	case 3:
		return cents * 10, true
	}
	return cents, true
}

// paymentDescription is COLLECT_PAYMENT's description, naming the fixed
// amount so that the model knows what it charges without a quote.
func paymentDescription(c parley.PaymentConnector) string {
	d := "Create a secure Stripe payment link the visitor opens to pay online. Call it only when the visitor wants to pay. " +
		"The amount is never yours to choose: the link charges the total of the latest quote of this conversation (or the quote named by quoteId, as a quote's result gives it)"
	if c.DefaultAmount != nil && c.Currency != nil {
		if cur, dec, ok := parley.PaymentCurrency(*c.Currency); ok {
			what := "a fixed payment"
			if c.DefaultDescription != nil && *c.DefaultDescription != "" {
				what = *c.DefaultDescription
			}
			d += fmt.Sprintf("; with no quote, it charges %s %s for %s", parley.FormatMinor(*c.DefaultAmount, dec), strings.ToUpper(cur), what)
		}
	} else {
		d += "; with no quote, no link can be made: make a quote first"
	}
	d += ". Give the visitor the link exactly as the tool returns it."
	if c.KeyMode == parley.StripeModeTest {
		d += " The business is in Stripe test mode: say that the link is a test and charges no real money."
	}
	return d
}

func paymentSchema() map[string]any {
	return map[string]any{"type": "object", "properties": map[string]any{
		"quoteId": map[string]any{"type": "string", "description": "the quoteId of a quote made in this conversation; leave out for the latest quote"},
	}, "required": []string{}, "additionalProperties": false}
}

// collectPayment runs COLLECT_PAYMENT.
func (r *Registry) collectPayment(ctx context.Context, in map[string]any, ex *Execution) {
	p := r.deps.Payment
	for k := range in {
		if k != "quoteId" {
			ex.Summary = fmt.Sprintf("No payment link was made: %q is not a parameter. The amount comes from a quote of this conversation or the business's fixed price, never from the call; pass at most quoteId.", k)
			ex.Data = map[string]any{"error": "bad_arguments"}
			return
		}
	}
	quoteID := ""
	switch v := in["quoteId"].(type) {
	case nil:
	case string:
		quoteID = strings.TrimSpace(v)
		if len(quoteID) > 64 {
			ex.Summary = "No payment link was made: quoteId is too long; pass a quoteId as a quote's result gives it (such as Q-1A2B3C4D), or leave it out for the latest quote."
			ex.Data = map[string]any{"error": "bad_arguments"}
			return
		}
	default:
		ex.Summary = "No payment link was made: quoteId must be a string (such as Q-1A2B3C4D), or left out for the latest quote."
		ex.Data = map[string]any{"error": "bad_arguments"}
		return
	}
	stored, err := p.Store.ConversationPayments(ctx, p.TenantID, p.ConversationID)
	if err != nil {
		ex.Summary = "No payment link was made: the conversation's quotes could not be read. Ask the visitor to try again in a moment."
		ex.Err = err
		return
	}
	var storedQuotes []quoteRef
	links := slices.Clone(p.links)
	for _, s := range stored {
		result := decodeObjectNumbers(s.Result)
		switch s.ToolType {
		case parley.ToolGenerateQuote:
			if q, ok := quoteFrom(result, s.ID); ok {
				storedQuotes = append(storedQuotes, q)
			}
		case CollectPaymentType:
			if url, _ := result["paymentUrl"].(string); url != "" {
				links = append(links, madeLink{source: paymentSource(decodeObjectNumbers(s.Input)), result: result})
			}
		}
	}

	// The amount: a quote of this conversation, else the fixed amount.
	var quote *quoteRef
	for i := len(p.quotes) - 1; i >= 0 && quote == nil; i-- {
		if quoteID == "" || strings.EqualFold(p.quotes[i].id, quoteID) {
			quote = &p.quotes[i]
		}
	}
	for i := 0; i < len(storedQuotes) && quote == nil; i++ {
		if quoteID == "" || strings.EqualFold(storedQuotes[i].id, quoteID) {
			quote = &storedQuotes[i]
		}
	}
	input := map[string]any{}
	var req stripe.PaymentLinkRequest
	var decimals int
	switch {
	case quote != nil:
		cur, dec, ok := parley.PaymentCurrency(quote.currency)
		if !ok {
			ex.Summary = fmt.Sprintf("No payment link was made: the quote is in %s, a currency Stripe cannot charge. Tell the visitor online payment is not possible for this quote.", quote.currency)
			ex.Data = map[string]any{"error": "currency"}
			return
		}
		amount, ok := minorFromCents(quote.totalCents, dec)
		if !ok || amount <= 0 || amount > parley.MaxPaymentMinor {
			ex.Summary = fmt.Sprintf("No payment link was made: the quote's total cannot be charged in one payment link (at most %s %s, more than zero, in whole units of the currency).",
				parley.FormatMinor(parley.MaxPaymentMinor, dec), strings.ToUpper(cur))
			ex.Data = map[string]any{"error": "amount"}
			return
		}
		if quote.validUntil != "" && quote.validUntil < ex.At.UTC().Format("2006-01-02") {
			ex.Summary = fmt.Sprintf("No payment link was made: quote %s expired on %s. Make a new quote first.", quote.id, quote.validUntil)
			ex.Data = map[string]any{"error": "quote_expired"}
			return
		}
		input["amountFrom"], input["quoteId"] = "quote", quote.id
		req = stripe.PaymentLinkRequest{Currency: cur, Amount: amount, Description: "Quote " + quote.id}
		decimals = dec
	case quoteID != "":
		ex.Summary = fmt.Sprintf("No payment link was made: there is no quote %s in this conversation. Leave quoteId out to use the latest quote, or make a quote first.", quoteID)
		ex.Data = map[string]any{"error": "unknown_quote"}
		return
	case p.Connector.DefaultAmount != nil && p.Connector.Currency != nil:
		cur, dec, ok := parley.PaymentCurrency(*p.Connector.Currency)
		if !ok {
			ex.Summary = "No payment link was made: the business's fixed amount is in a currency Stripe cannot charge."
			ex.Data = map[string]any{"error": "currency"}
			return
		}
		input["amountFrom"], input["amountMinor"], input["currency"] = "fixed", *p.Connector.DefaultAmount, cur
		req = stripe.PaymentLinkRequest{Currency: cur, Amount: *p.Connector.DefaultAmount, Description: "Payment"}
		if d := p.Connector.DefaultDescription; d != nil && *d != "" {
			req.Description = *d
		}
		decimals = dec
	default:
		ex.Summary = "No payment link was made: this conversation has no quote and the business set no fixed amount. Make a quote for what the visitor wants to buy first."
		ex.Data = map[string]any{"error": "no_amount"}
		return
	}
	amountText := parley.FormatMinor(req.Amount, decimals) + " " + strings.ToUpper(req.Currency)

	// A link already made for the same thing is given again, not remade.
	source := paymentSource(input)
	for _, l := range links {
		if l.source == source {
			ex.Success = true
			ex.Result = l.result
			ex.Summary = fmt.Sprintf("A payment link for %s was already made in this conversation: %v. Give the visitor this same link.", amountText, l.result["paymentUrl"])
			ex.Data = map[string]any{"reused": true, "amount": l.result["amount"], "currency": l.result["currency"]}
			return
		}
	}

	if s := p.Connector.SuccessMessage; s != nil {
		req.SuccessMessage = *s
	}
	req.Metadata = map[string]string{"parley_conversation_id": p.ConversationID}
	if quote != nil {
		req.Metadata["parley_quote_id"] = quote.id
	}
	req.IdempotencyKey = idempotencyKey(p.TenantID, p.ConversationID, source, amountText)
	link, err := p.Stripe.CreatePaymentLink(ctx, p.Key, req)
	if err != nil {
		pe, _ := err.(*stripe.PaymentError)
		if pe == nil {
			pe = &stripe.PaymentError{Kind: stripe.PaymentUnavailable, Message: "Stripe could not be reached"}
		}
		ex.Summary = paymentFailure(pe)
		ex.Data = map[string]any{"error": string(pe.Kind)}
		if pe.Code != "" {
			ex.Data["code"] = pe.Code
		}
		ex.Err = pe
		return
	}
	mode := parley.StripeModeLive
	if !link.Livemode {
		mode = parley.StripeModeTest
	}
	result := map[string]any{
		"paymentUrl": link.URL, "paymentLinkId": link.ID, "amount": parley.FormatMinor(req.Amount, decimals),
		"amountMinor": req.Amount, "currency": strings.ToUpper(req.Currency), "description": req.Description, "mode": mode,
	}
	if quote != nil {
		result["quoteId"] = quote.id
	}
	if req.SuccessMessage != "" {
		result["successMessage"] = req.SuccessMessage
	}
	ex.Success = true
	ex.Result = result
	ex.Summary = fmt.Sprintf("Payment link for %s created: %s. Give the visitor this exact link.", amountText, link.URL)
	if mode == parley.StripeModeTest {
		ex.Summary += " It is a Stripe test-mode link: no real money is charged."
	}
	ex.Data = map[string]any{"amount": result["amount"], "currency": result["currency"], "mode": mode, "paymentUrl": link.URL}
	ex.Submission = &SubmissionDraft{ToolName: PaymentSubmissionName, ToolType: CollectPaymentType, Input: input, Result: result}
	p.links = append(p.links, madeLink{source: source, result: result})
}

// paymentFailure is what the model is told of a failed Stripe call, to
// explain to the visitor.
func paymentFailure(pe *stripe.PaymentError) string {
	switch pe.Kind {
	case stripe.PaymentKeyRefused:
		return "No payment link was made: the business's Stripe account refused the connection (" + pe.Message + "). " +
			"Tell the visitor online payment is unavailable right now and offer another way to pay or to be contacted; do not retry."
	case stripe.PaymentRateLimited:
		return "No payment link was made: Stripe is receiving too many requests right now. Ask the visitor to wait a moment, then try once more."
	case stripe.PaymentTimeout:
		return "No payment link was made: Stripe did not answer in time. Ask the visitor to try again in a moment."
	case stripe.PaymentRefused:
		return "No payment link was made: Stripe refused it (" + pe.Message + "). Explain this to the visitor in plain words; do not retry with the same amount."
	}
	return "No payment link was made: Stripe is unavailable right now (" + pe.Message + "). Ask the visitor to try again later or offer another way to pay."
}

// idempotencyKey is the Idempotency-Key of one payment link: the same
// source (a quote, or the fixed amount) in the same conversation asks
// Stripe for the same link.
func idempotencyKey(parts ...string) string {
	h := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return "parley-" + hex.EncodeToString(h[:20])
}
