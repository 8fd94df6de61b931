// Package public is the surface a tenant's website and its visitors' agents
// call without a credential: chat (POST /chat/{slug}, its feedback and the
// widget's settings), the lead form (POST /form/{slug}) and the agent
// context document (GET /context/{slug}). Each request passes one gate
// sequence (publicGates) and is counted against its address's limit.
package public

import (
	"context"
	"sync"
	"time"

	"github.com/parley/parley"
	"github.com/parley/parley/agent"
	"github.com/parley/parley/agent/outbound"
	"github.com/parley/parley/agent/tools"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/db"
	"github.com/parley/parley/db/live"
	"github.com/parley/parley/handlers"
)

// Handler answers the public surface.
type Handler struct {
	*handlers.Runtime
	DB  *db.DB
	Box *auth.Box
	// Engine runs the turns.
	Engine *agent.Engine
	// Captcha checks the bot-challenge tokens of chat messages.
	Captcha *auth.BotChallenge
	// CaptchaScriptURL is the challenge's browser script, named in the
	// widget's settings of a tenant with the gate on.
	CaptchaScriptURL string
	// Outbound checks the model endpoint a caller brings (callerLLM).
	Outbound *outbound.Guard
	// AdminTools are the management tools of a chat whose visitor token
	// carries an admin scope (the MCP server's, as chat tools).
	AdminTools func(ctx context.Context, t parley.Tenant, token string) ([]tools.Extra, error)
	// Live wakes the visitors' streams (StreamChat) when their conversation
	// changes; StreamKey signs and checks their tokens (StreamKey's);
	// StreamKeepAlive is how often an idle stream sends a comment
	// (DefaultStreamKeepAlive when 0).
	Live            *live.Hub
	StreamKey       []byte
	StreamKeepAlive time.Duration

	// sightings holds, per tenant id, when this process last recorded the
	// widget's installation (noteInstallation), so that a widget loading
	// on every page of a busy site costs the database one write an hour,
	// not one statement per page view.
	sightings sync.Map
	// typing drops the visitors' typing signals sent faster than the
	// store keeps them (SignalTyping).
	typing typingThrottle
	// refusals counts the refused sites between their writes (noteRefusal).
	refusals refusalThrottle
}
