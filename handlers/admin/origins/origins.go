// Package origins is the dashboard's answer to the sites the widget was
// refused on (db/origins, recorded by handlers/public's origin gate): the
// overview's "Sites refused in the last 30 days" (Sites, which the overview
// renders), and its two buttons, "Allow this site", which adds the site to
// the tenant's allowed domains with the rules and limits of the developer
// settings (manage.UpdateTenant), and "Dismiss", which forgets it. Both
// are an admin's, and the allowing is recorded in the audit log as a
// change of the settings (handlers/auditing's table).
package origins

import (
	"context"
	"net/url"
	"slices"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/parley/parley"
	"github.com/parley/parley/handlers"
	"github.com/parley/parley/handlers/admin/dash"
	"github.com/parley/parley/handlers/auditing"
	"github.com/parley/parley/handlers/resource"
	"github.com/parley/parley/views"
)

// Days is how far back the overview lists refused sites.
const Days = 30

// Origins is the dashboard's area of the refused sites.
type Origins struct{ *handlers.Base }

// New builds the area over the Base web builds.
func New(b *handlers.Base) *Origins { return &Origins{b} }

// overview is where the list is, and where its buttons come back to.
const overview = "/admin#refused-sites"

// Sites are t's sites refused in the last Days days, the most recently
// refused first, as the overview shows them (dates in t's time zone).
func Sites(ctx context.Context, b *handlers.Base, t parley.Tenant) ([]views.RefusedSite, error) {
	list, err := b.DB.RefusedOrigins(ctx, t.ID, b.Clock().AddDate(0, 0, -Days))
	if err != nil {
		return nil, err
	}
	loc := resource.TenantLocation(t)
	out := make([]views.RefusedSite, 0, len(list))
	for _, r := range list {
		out = append(out, views.RefusedSite{ID: r.ID, Origin: r.Origin, Refusals: r.Refusals,
			LastSeen: r.LastSeen.In(loc).Format("2 Jan 2006, 15:04")})
	}
	return out, nil
}

// AllowOrigin adds the refused site to the tenant's allowed domains (as
// the entry that admits exactly its host and port: Entry), with the
// developer settings' rules and limit, and forgets it from the list. The
// chat's configuration cache sees the change at the site's next request
// (any change of the tenant moves its configuration version). A tenant
// whose list is empty admits every site already: the site is only
// forgotten. A refusal of the rules (the list full, a site that is no
// domain) comes back to the overview in words.
func (h *Origins) AllowOrigin(c echo.Context) error {
	ctx, t := c.Request().Context(), dash.AdminFrom(c).Tenant
	r, err := h.DB.RefusedOrigin(ctx, t.ID, c.Param("id"))
	if err != nil {
		return err
	}
	msg := r.Origin + " is allowed: its visitors see your chat now."
	switch entry := Entry(r.Origin); {
	case len(t.AllowedDomains) == 0:
		msg = "Every site may show your chat already (your allowed domains are empty): " + r.Origin + " is off the list."
	case !slices.Contains(t.AllowedDomains, entry):
		domains := append(slices.Clone(t.AllowedDomains), entry)
		_, err := h.Manage.UpdateTenant(ctx, t, parley.TenantInput{AllowedDomains: parley.Some(domains)})
		if parley.ErrorKind(err) == parley.KindInvalid {
			h.Sessions.Put(ctx, dash.SessFlashError, refusal(r.Origin, len(domains)))
			return dash.SeeOther(c, overview)
		}
		if err != nil {
			return err
		}
		c.Set(auditing.AllowedSite, r.Origin)
	}
	if err := h.DB.ForgetRefusedOrigin(ctx, t.ID, r.ID); err != nil && parley.ErrorKind(err) != parley.KindNotFound {
		return err
	}
	h.Sessions.Put(ctx, dash.SessFlash, msg)
	return dash.SeeOther(c, overview)
}

// refusal says why origin could not join the allowed domains, which would
// have counted n entries with it.
func refusal(origin string, n int) string {
	if n > parley.MaxDomains {
		return "Your allowed domains are full (" + strconv.Itoa(parley.MaxDomains) + " of " + strconv.Itoa(parley.MaxDomains) +
			"): remove one under Settings, Developer settings, before allowing " + origin + "."
	}
	return origin + " cannot be allowed: only a site named by its domain (such as shop.example.com) can be."
}

// DismissOrigin forgets a refused site: it comes back if the widget is
// refused there again.
func (h *Origins) DismissOrigin(c echo.Context) error {
	ctx, t := c.Request().Context(), dash.AdminFrom(c).Tenant
	r, err := h.DB.RefusedOrigin(ctx, t.ID, c.Param("id"))
	if err != nil {
		return err
	}
	if err := h.DB.ForgetRefusedOrigin(ctx, t.ID, r.ID); err != nil {
		return err
	}
	h.Sessions.Put(ctx, dash.SessFlash, r.Origin+" is off the list. It comes back if your widget is refused there again.")
	return dash.SeeOther(c, overview)
}

// Entry is the allowed-domains entry that admits origin
// (scheme://host[:port]): its host, with its port when it is not the
// scheme's default.
func Entry(origin string) string {
	u, err := url.Parse(origin)
	if err != nil {
		return origin
	}
	switch p := u.Port(); {
	case p == "" || (u.Scheme == "https" && p == "443") || (u.Scheme == "http" && p == "80"):
		return u.Hostname()
	default:
		return u.Hostname() + ":" + p
	}
}
