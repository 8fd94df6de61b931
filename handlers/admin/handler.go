// Package admin is the tenant owner's dashboard under /admin: server-rendered
// pages (templ, htmx) for the settings, the knowledge base, segments, tools,
// products, visitors, conversations, submissions, webhooks, connectors and
// connected apps, the sign-in and password reset, and the test chat. Its
// forms call the management operations (manage) the REST API calls, and a
// failed form is rendered again with its problems beside each field.
//
// The package holds New, Handler and five of its areas (Account, Leads,
// Presence, Knowledge, Settings); the Tools and Integrations areas are packages of
// their own below it (handlers/admin/tools, handlers/admin/integrations,
// handlers/admin/voice, handlers/admin/plan, handlers/admin/security: the account's safety,
// handlers/admin/origins: the sites the widget was refused on),
// and what every area shares (the page's layout, flashes, a failed form's
// status, the redirect after a change) is handlers/admin/dash, below them
// all. The dashboard's HTTP tests, every area's, sit here.
package admin

import (
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/admin/audit"
	"github.com/parley/parley/handlers/admin/corrections"
	"github.com/parley/parley/handlers/admin/gaps"
	"github.com/parley/parley/handlers/admin/integrations"
	"github.com/parley/parley/handlers/admin/origins"
	"github.com/parley/parley/handlers/admin/plan"
	"github.com/parley/parley/handlers/admin/scripting"
	"github.com/parley/parley/handlers/admin/security"
	"github.com/parley/parley/handlers/admin/signup"
	"github.com/parley/parley/handlers/admin/team"
	"github.com/parley/parley/handlers/admin/testset"
	"github.com/parley/parley/handlers/admin/tools"
	"github.com/parley/parley/handlers/admin/voice"
)

// Handler answers the dashboard, one area of it a field; web's route table
// names each route's method through its area.
type Handler struct {
	Account      *Account
	Leads        *Leads
	Presence     *Presence
	Knowledge    *Knowledge
	Settings     *Settings
	Tools        *tools.Tools
	Integrations *integrations.Integrations
	Voice        *voice.Voice
	Team         *team.Team
	Signup       *signup.Signup
	Plan         *plan.Plan
	Security     *security.Security
	Audit        *audit.Audit
	Origins      *origins.Origins
	Scripting    *scripting.Scripting
	Corrections  *corrections.Corrections
	Tests        *testset.Tests
	Gaps         *gaps.Gaps
}

// New builds the dashboard's areas over the Base web builds, which the REST
// API's areas embed too: the operations both run are Base's.
func New(b *handlers.Base) *Handler {
	c := core{b}
	return &Handler{
		Account:      &Account{c},
		Leads:        &Leads{c},
		Presence:     &Presence{c},
		Knowledge:    &Knowledge{c},
		Settings:     &Settings{c},
		Tools:        tools.New(b),
		Integrations: integrations.New(b),
		Voice:        voice.New(b),
		Team:         team.New(b),
		Signup:       signup.New(b),
		Plan:         plan.New(b),
		Security:     security.New(b),
		Audit:        audit.New(b),
		Origins:      origins.New(b),
		Scripting:    scripting.New(b),
		Corrections:  corrections.New(b),
		Tests:        testset.New(b),
		Gaps:         gaps.New(b),
	}
}

// core is what every area of this package embeds: the Base, and the helpers
// these areas share as its methods.
type core struct{ *handlers.Base }

// Presence is what the visitor's widget shows of the person at the
// dashboard while they answer: that they are typing. (Leads is at its
// method budget.)
type Presence struct{ core }

// Account is the sign-in and sign-out, the tenant switch, the overview,
// the password reset, and the OAuth consent page and connected apps.
type Account struct{ core }

// Leads is who talked to the assistant and what came of it: the
// conversations, the analytics, the submissions and their export, and the
// visitors with their memory.
type Leads struct{ core }

// Knowledge is what the assistant knows: the knowledge base's entries, its
// URL sync and CSV import, its synonyms and its embedding endpoint.
type Knowledge struct{ core }

// Settings is how the assistant looks, speaks and behaves: the settings
// pages, the avatar, the segments and the test chat (the voice settings
// are handlers/admin/voice).
type Settings struct{ core }
