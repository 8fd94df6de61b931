package admin_test

import (
	"bytes"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/parley/parley/web/webtest"
)

// TestAdminAvatarUpload: an owner uploads the bot's picture; Parley serves
// it publicly at a versioned address, cached for a year and revalidated by
// ETag, and the widget's settings point at it. Files that are not pictures,
// pictures too large and SVG (which can carry script) are refused in plain
// words; removing the picture brings the initial back.
func TestAdminAvatarUpload(t *testing.T) {
	t.Parallel()
	b := webtest.Setup(t)
	b.AtItsAddress()
	ten, other := b.OwnedTenant(t, "starter"), b.OwnedTenant(t, "starter")
	c := b.NewAdminClient(t)
	c.SignIn(ten)
	c.Get("/admin/settings/widget")

	refused := func(name string, data []byte, want string) {
		t.Helper()
		p := c.UploadAvatar(name, data)
		if p.Status != http.StatusSeeOther {
			t.Fatalf("%s: status %d", name, p.Status)
		}
		if got := c.Get("/admin/settings/widget").Text(".flash.error"); !strings.Contains(got, want) {
			t.Errorf("%s: message %q, want %q", name, got, want)
		}
		if got := b.TenantNow(t, ten.Slug).BotAvatar; got != nil {
			t.Errorf("%s: avatar set to %q", name, *got)
		}
	}
	refused("notes.txt", []byte("just some text, not a picture"), "not a picture Parley can show")
	refused("logo.svg", []byte(`<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`), "not a picture Parley can show")
	big := append(webtest.PNG(t, 8), make([]byte, 512<<10)...) // a PNG header, over 512 KiB
	refused("big.png", big, "too large: at most 512 KB")

	pic := webtest.PNG(t, 64)
	if p := c.UploadAvatar("me.png", pic); p.Status != http.StatusSeeOther {
		t.Fatalf("upload: status %d", p.Status)
	}
	page := c.Get("/admin/settings/widget")
	if got := page.Text(".flash.ok"); got != "Avatar uploaded: the chat shows it now." {
		t.Errorf("flash = %q", got)
	}
	addr := webtest.StrOrEmpty(b.TenantNow(t, ten.Slug).BotAvatar)
	if !strings.HasPrefix(addr, b.TS.URL+"/avatars/"+ten.Slug+"?v=") {
		t.Fatalf("botAvatar = %q", addr)
	}
	if src := page.Doc.Find("img.avatar-current").AttrOr("src", ""); src != addr {
		t.Errorf("the page shows %q", src)
	}
	// The widget's settings point at it.
	if _, body, _ := b.GetWidgetSettings(t, "/chat/"+ten.Slug+"/widget", nil); body["bot"].(map[string]any)["avatar"] != addr {
		t.Errorf("widget settings avatar = %v", body["bot"].(map[string]any)["avatar"])
	}

	// Served as uploaded, public, immutable at its versioned address.
	client := b.TS.Client()
	resp, err := client.Get(addr)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !bytes.Equal(got, pic) || resp.Header.Get("Content-Type") != "image/png" ||
		resp.Header.Get("Cache-Control") != "public, max-age=31536000, immutable" || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("GET avatar: %d, %d bytes, %q, %q", resp.StatusCode, len(got), resp.Header.Get("Content-Type"), resp.Header.Get("Cache-Control"))
	}
	req, _ := http.NewRequest("GET", b.TS.URL+"/avatars/"+ten.Slug, nil)
	req.Header.Set("If-None-Match", resp.Header.Get("ETag"))
	again, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	again.Body.Close()
	if again.StatusCode != http.StatusNotModified || again.Header.Get("Cache-Control") != "public, max-age=300" {
		t.Errorf("unversioned revalidation: %d, %q", again.StatusCode, again.Header.Get("Cache-Control"))
	}
	// Another tenant has none; an unknown slug is 404.
	for _, slug := range []string{other.Slug, "no-such-tenant"} {
		r, err := client.Get(b.TS.URL + "/avatars/" + slug)
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		if r.StatusCode != http.StatusNotFound {
			t.Errorf("/avatars/%s: %d, want 404", slug, r.StatusCode)
		}
	}

	// Removing it.
	c.Get("/admin/settings/widget")
	if p := c.Submit("/admin/settings/avatar?action=remove", url.Values{}); p.Status != http.StatusSeeOther {
		t.Fatalf("remove: %d", p.Status)
	}
	if got := b.TenantNow(t, ten.Slug).BotAvatar; got != nil {
		t.Errorf("after removing, botAvatar = %q", *got)
	}
	if r, _ := client.Get(addr); r != nil {
		r.Body.Close()
		if r.StatusCode != http.StatusNotFound {
			t.Errorf("after removing, the picture answers %d", r.StatusCode)
		}
	}
}
