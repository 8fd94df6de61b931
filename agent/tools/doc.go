// Package tools is a turn's tool registry and the built-in tools' execution:
// the tenant's tools (SUBMIT_FORM, GENERATE_QUOTE, REMEMBER_FACT,
// RECOMMEND_PRODUCT, ESCALATE_TO_HUMAN, BOOK_MEETING) and the synthetic ones
// (explore_corpus; check_availability over the tenant's calendar,
// calendar.go; collect_payment through Stripe, payment.go; the visitor
// verification tools, verification.go) become the specs the model is
// offered, and the calls it makes are validated and run here. A caller's
// own tools (Extra: an MCP server's, the admin token's management tools) run
// through their run func. The engine (package agent) decides which tools a
// turn offers, in its enrichment chain, and binds them to the turn through
// Deps; the outside services are reached through small interfaces
// (CalendarServer, Stripe, Mailer and the stores).
package tools
