package outbound

import (
	"context"
	"net/url"
)

// Exempt reports whether every address rawURL's host resolves to lies in a
// prefix the operator exempted from the guard (PARLEY_SSRF_ALLOW): a host of
// the operator's own network, which may for instance be reached over plain
// http where a public host must use https.
func (g *Guard) Exempt(ctx context.Context, rawURL string) bool {
	u, err := url.Parse(rawURL)
	if err != nil || u.Hostname() == "" || len(g.allow) == 0 {
		return false
	}
	addrs, err := g.lookup(ctx, u.Hostname())
	if err != nil || len(addrs) == 0 {
		return false
	}
	for _, a := range addrs {
		in := false
		for _, p := range g.allow {
			if p.Contains(a.Unmap()) || p.Contains(a) {
				in = true
				break
			}
		}
		if !in {
			return false
		}
	}
	return true
}
