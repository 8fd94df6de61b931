package admin

import (
	"errors"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/auth"
	"github.com/parley/parley/db"
	"github.com/parley/parley/db/audit"
	"github.com/parley/parley/db/listing"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/admin/dash"
	"github.com/parley/parley/handlers/admin/origins"
	"github.com/parley/parley/handlers/admin/security"
	"github.com/parley/parley/handlers/resource"
	"github.com/parley/parley/views"
)

// loginChallengeAfter is how many failures an address has made, of those
// remembered, before signing in from it takes solving the bot challenge,
// when one is configured (Base.SignInChallenge).
const loginChallengeAfter = 3

// RequireAdmin lets signed-in users through with their handlers.AdminContext and sends
// everyone else to the sign-in page.
func (h *Account) RequireAdmin(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx := c.Request().Context()
		userID := h.Sessions.GetString(ctx, dash.SessUserID)
		if userID == "" {
			return h.toLogin(c)
		}
		user, err := h.DB.UserByID(ctx, userID)
		if parley.ErrorKind(err) == parley.KindNotFound {
			_ = h.Sessions.Destroy(ctx)
			return h.toLogin(c)
		}
		if err != nil {
			return err
		}
		if !auth.StampMatches(h.Sessions.GetString(ctx, dash.SessPasswordStamp), user.PasswordHash) {
			// Signed in with a password changed since (a reset link, or
			// an operator's parley user create).
			_ = h.Sessions.Destroy(ctx)
			return h.toLogin(c)
		}
		ms, err := h.DB.Memberships(ctx, userID)
		if err != nil {
			return err
		}
		if len(ms) == 0 {
			_ = h.Sessions.Destroy(ctx)
			return handlers.Render(c, http.StatusForbidden, views.ErrorPage(http.StatusForbidden, "Your account administers no tenant."))
		}
		current := ms[0]
		want := h.Sessions.GetString(ctx, dash.SessTenantID)
		for _, m := range ms {
			if m.TenantID == want {
				current = m
			}
		}
		t, err := h.DB.TenantByID(ctx, current.TenantID)
		if err != nil {
			return err
		}
		handlers.SetAdmin(c, &handlers.AdminContext{User: user, Tenant: t, Role: current.Role, Memberships: ms})
		c.SetRequest(c.Request().WithContext(audit.WithActor(ctx, audit.Actor{Kind: audit.ActorPerson, ID: user.ID, Name: user.Email})))
		// The session's activity, and the tenant's two-step requirement.
		switch to, ended, err := security.Admit(c, h.Base, current); {
		case err != nil:
			return err
		case ended:
			_ = h.Sessions.Destroy(ctx)
			return h.toLogin(c)
		case to != "" && JSONRequest(c.Request()):
			return &parley.Error{Kind: parley.KindForbidden, Message: "Set up two-step sign-in first: this tenant requires it"}
		case to != "":
			return dash.SeeOther(c, to)
		}
		return next(c)
	}
}

func (h *core) toLogin(c echo.Context) error {
	if JSONRequest(c.Request()) {
		return &parley.Error{Kind: parley.KindUnauthorized, Message: "You are signed out: sign in again"}
	}
	target := "/admin/login"
	if c.Request().Method == http.MethodGet && c.Request().URL.Path != "/admin" {
		target += "?next=" + url.QueryEscape(c.Request().URL.RequestURI())
	}
	if c.Request().Header.Get("HX-Request") == "true" {
		c.Response().Header().Set("HX-Redirect", target)
		return c.NoContent(http.StatusUnauthorized)
	}
	return c.Redirect(http.StatusSeeOther, target)
}

// JSONRequest reports whether the request is a JSON call (the dashboard's
// scripts), which gets its errors as JSON rather than as an HTML page.
func JSONRequest(r *http.Request) bool {
	return strings.HasPrefix(r.Header.Get(echo.HeaderContentType), echo.MIMEApplicationJSON)
}

// withChallenge adds the bot challenge to the sign-in form of an address
// with failures remembered, when they are enough and a challenge is configured.
func (h *core) withChallenge(form *views.LoginForm, failures int) {
	if h.SignInChallenge.SiteKey != "" && failures >= loginChallengeAfter {
		form.ChallengeSiteKey, form.ChallengeScriptURL = h.SignInChallenge.SiteKey, h.CaptchaScriptURL
	}
}

// ShowLoginPage renders the sign-in page.
func (h *Account) ShowLoginPage(c echo.Context) error {
	ctx := c.Request().Context()
	if h.Sessions.GetString(ctx, dash.SessUserID) != "" {
		return c.Redirect(http.StatusSeeOther, "/admin")
	}
	form := views.LoginForm{CSRF: dash.CSRFToken(c), Next: c.QueryParam("next"), Notice: h.Sessions.PopString(ctx, dash.SessFlash),
		SignUp: h.SignUp == "open"}
	if h.SignInChallenge.SiteKey != "" {
		n, err := h.DB.LoginFailures(ctx, security.LoginAddressKey(c.RealIP()), h.Clock())
		if err != nil {
			return err
		}
		h.withChallenge(&form, n)
	}
	return handlers.Render(c, http.StatusOK, views.Login(form))
}

// checkSignInChallenge verifies the bot challenge's token of the sign-in
// form, and says what went wrong in the owner's words ("" when solved). It
// fails closed, as the widget's gate does, and logs why for the operator.
func (h *core) checkSignInChallenge(c echo.Context) string {
	token := strings.TrimSpace(c.FormValue("challengeToken"))
	if token == "" {
		return "Complete the check that you are not a robot, then sign in."
	}
	err := h.Captcha.Verify(c.Request().Context(), h.SignInChallenge.SecretKey, token, c.RealIP())
	var refused *auth.RefusedError
	switch {
	case errors.As(err, &refused):
		h.Log(c).Info("sign-in bot challenge refused", "error_codes", refused.Codes)
		return "The check that you are not a robot failed: do it again, then sign in."
	case err != nil:
		h.Log(c).Warn("sign-in bot challenge unavailable", "err", err)
		return "The check that you are not a robot could not be verified right now: try again shortly."
	}
	return ""
}

// Login checks the credentials, throttled per client address and per
// client address and account (loginThrottles): a refused attempt is told
// when to try again, in words and in Retry-After.
func (h *Account) Login(c echo.Context) error {
	ctx := c.Request().Context()
	email := strings.TrimSpace(c.FormValue("email"))
	password := c.FormValue("password")
	form := views.LoginForm{Email: email, CSRF: dash.CSRFToken(c), Next: c.FormValue("next"), SignUp: h.SignUp == "open"}
	attempt, err := h.DB.StartLoginAttempt(ctx, security.LoginThrottles(c.RealIP(), email), h.Clock())
	if err != nil {
		return err
	}
	// Failures of the address before this attempt, which counts as one
	// until the password proves right.
	failures := attempt.Failures[0]
	if attempt.Wait > 0 {
		h.withChallenge(&form, failures)
		secs := int64(math.Ceil(attempt.Wait.Seconds()))
		c.Response().Header().Set("Retry-After", strconv.FormatInt(secs, 10))
		form.Error = "Too many failed sign-in attempts. Try again in " + security.WaitWords(secs) + "."
		return handlers.Render(c, http.StatusTooManyRequests, views.Login(form))
	}
	h.withChallenge(&form, failures+1)
	if h.SignInChallenge.SiteKey != "" && failures >= loginChallengeAfter {
		if msg := h.checkSignInChallenge(c); msg != "" {
			form.Error = msg
			return handlers.Render(c, http.StatusForbidden, views.Login(form))
		}
	}
	user, err := h.DB.UserByEmail(ctx, email)
	if err != nil && parley.ErrorKind(err) != parley.KindNotFound {
		return err
	}
	if !h.Passwords.Check(user.PasswordHash, password) {
		// The attempt was counted as a failure when it started.
		form.Error = "Wrong email or password."
		return handlers.Render(c, http.StatusUnauthorized, views.Login(form))
	}
	if err := h.DB.ForgiveLoginAttempt(ctx, attempt); err != nil {
		return err
	}
	// The code's step, with two-step sign-in on; the session otherwise.
	return security.SignIn(c, h.Base, user, form.Next)
}

// SwitchTenant changes the tenant being administered, among the user's own.
func (h *Account) SwitchTenant(c echo.Context) error {
	a := dash.AdminFrom(c)
	slug := c.FormValue("tenant")
	for _, m := range a.Memberships {
		if m.TenantSlug == slug {
			h.Sessions.Put(c.Request().Context(), dash.SessTenantID, m.TenantID)
			return c.Redirect(http.StatusSeeOther, "/admin")
		}
	}
	return handlers.Render(c, http.StatusNotFound, views.ErrorPage(http.StatusNotFound, "You do not administer that tenant."))
}

// onboarding is the new owner's path (persona, knowledge, test, install
// (installed: the widget was seen on the tenant's site), leads) with what
// is done ticked, until it is complete: then the tenant is
// marked onboarded and the path is no longer shown.
func (h *core) onboarding(c echo.Context, t parley.Tenant, installed bool) ([]views.Step, error) {
	if t.IsOnboarded {
		return nil, nil
	}
	ctx := c.Request().Context()
	o, err := h.DB.TenantOnboarding(ctx, t.ID)
	if err != nil {
		return nil, err
	}
	o.Installed = installed // read with the embed card
	if o.Done() {
		_, err := h.DB.UpdateTenant(ctx, t.ID, db.TenantPatch{IsOnboarded: parley.Some(true)})
		return nil, err
	}
	return []views.Step{
		{Label: "Give your assistant a name and a personality", Hint: "Its name, its tone, and what it knows about itself.",
			Href: "/admin/settings", Action: "Open the persona settings", Done: o.Persona},
		{Label: "Teach it what it should know", Hint: "Add your FAQ, opening hours, prices: type them, import a CSV or add a web page.",
			Href: "/admin/corpus", Action: "Open the knowledge base", Done: o.Knowledge},
		{Label: "Try it yourself", Hint: "Ask it what your visitors would ask, and see what it used to answer.",
			Href: "/admin/test-chat", Action: "Open the test chat", Done: o.Tested},
		{Label: "Put the chat on your site", Hint: "Paste the embed code below into your pages; this ticks itself once a visitor's page loads it.",
			Href: "#embed", Action: "See the embed code", Done: o.Installed},
		{Label: "Collect leads", Hint: "Turn on a segment's lead form so the assistant can take visitors' contact details.",
			Href: "/admin/segments", Action: "Open segments", Done: o.Leads},
	}, nil
}

// ShowOverviewPage renders the dashboard home.
func (h *Account) ShowOverviewPage(c echo.Context) error {
	a := dash.AdminFrom(c)
	u, err := h.DB.TenantUsage(c.Request().Context(), a.Tenant.ID, h.Clock())
	if err != nil {
		return err
	}
	s := resource.NewStatsJSON(a.Tenant, u)
	embed, err := h.embed(c, a.Tenant, "")
	if err != nil {
		return err
	}
	steps, err := h.onboarding(c, a.Tenant, embed.SeenAt != "")
	if err != nil {
		return err
	}
	o := views.Overview{
		Plan: s.Plan, IsActivated: a.Tenant.PlanInfo().Widget,
		ConversationsUsed: s.ConversationsUsed, ConversationsLimit: s.ConversationsLimit,
		SegmentsCount: s.SegmentsCount, SegmentsLimit: s.SegmentsLimit, CorpusCount: s.CorpusCount, CorpusLimit: s.CorpusLimit,
		APITokensCount: s.APITokensCount, PeriodEnd: s.PeriodEnd.Format("2 January 2006"),
		Embed: embed, Steps: steps, AnswersLocally: h.Engine.AnswersLocally(a.Tenant),
	}
	if err := h.overviewActivity(c, a.Tenant, &o); err != nil {
		return err
	}
	if o.RefusedSites, err = origins.Sites(c.Request().Context(), h.Base, a.Tenant); err != nil {
		return err
	}
	return handlers.Render(c, http.StatusOK, views.OverviewPage(dash.Page(c, h.Sessions, "Overview", "overview"), o))
}

// overviewLatest is how many conversations the overview lists.
const overviewLatest = 5

// overviewActivity adds the last 30 days (today included, in the tenant's
// time zone) to the overview: conversations and leads per day, the
// satisfaction, and the latest conversations.
func (h *core) overviewActivity(c echo.Context, t parley.Tenant, o *views.Overview) error {
	ctx := c.Request().Context()
	loc := resource.TenantLocation(t)
	now := h.Clock().In(loc)
	to := time.Date(now.Year(), now.Month(), now.Day()+1, 0, 0, 0, 0, loc)
	from := to.AddDate(0, 0, -parley.DefaultStatsDays)
	st, err := h.DB.ConversationTimeline(ctx, t.ID, listing.StatsQuery{Filter: listing.ConversationFilter{From: from, To: to},
		Granularity: "day", Location: loc.String()})
	if err != nil {
		return err
	}
	leads, err := h.DB.SubmissionsPerDay(ctx, t.ID, from, to, loc.String())
	if err != nil {
		return err
	}
	o.Activity = views.Chart{ID: "activity-chart", Title: "Conversations and leads per day", Series: []views.ChartSeries{
		{Name: "Conversations", Class: "series-a"}, {Name: "Leads", Class: "series-b"}}}
	for i, b := range st.Timeline {
		o.Activity.Labels = append(o.Activity.Labels, bucketLabel(b.Date, "day"))
		o.Activity.Series[0].Values = append(o.Activity.Series[0].Values, b.Conversations)
		n := 0
		if i < len(leads) && leads[i].Date == b.Date {
			n = leads[i].Count
		}
		o.Activity.Series[1].Values = append(o.Activity.Series[1].Values, n)
	}
	o.Satisfaction = satisfaction(st.Satisfaction)
	latest, err := h.DB.ListConversations(ctx, t.ID, listing.ConversationFilter{Page: 1, Limit: overviewLatest})
	if err != nil {
		return err
	}
	for _, it := range latest.Conversations {
		o.Latest = append(o.Latest, conversationRow(it, loc))
	}
	return nil
}
