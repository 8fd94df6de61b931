// Package fetchtest is the remote site of the corpus URL sync's tests: an
// in-process server whose pages tests set, and which counts their fetches.
package fetchtest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// Site is a remote site whose pages tests set and count fetches of.
type Site struct {
	mu    sync.Mutex
	pages map[string]Page
	hits  map[string]int
	ts    *httptest.Server
}

// Page is what the site answers at a path: Status (0: 200) with ContentType
// and Body; a Status of 302 redirects to Body instead.
type Page struct {
	Status      int
	ContentType string
	Body        string
}

// Start starts a site with no pages (every path 404), closed when the test ends.
func Start(t *testing.T) *Site {
	p := &Site{pages: map[string]Page{}, hits: map[string]int{}}
	p.ts = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.hits[r.URL.Path]++
		pg, ok := p.pages[r.URL.Path]
		p.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		if pg.Status == http.StatusFound {
			http.Redirect(w, r, pg.Body, http.StatusFound)
			return
		}
		w.Header().Set("Content-Type", pg.ContentType)
		if pg.Status != 0 {
			w.WriteHeader(pg.Status)
		}
		_, _ = io.WriteString(w, pg.Body)
	}))
	t.Cleanup(p.ts.Close)
	return p
}

// Set serves pg at path and returns the page's URL.
func (p *Site) Set(path string, pg Page) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pages[path] = pg
	return p.ts.URL + path
}

// Fetches says how many times path was requested.
func (p *Site) Fetches(path string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.hits[path]
}

// URL is the site's address, with no path.
func (p *Site) URL() string { return p.ts.URL }
