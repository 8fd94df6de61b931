package web

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// uploadAvatar posts a picture to the dashboard's avatar upload as the
// signed-in client c, as the browser's multipart form does.
func (c *adminClient) uploadAvatar(name string, data []byte) adminPage {
	c.t.Helper()
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	_ = w.WriteField("_csrf", c.csrf)
	fw, _ := w.CreateFormFile("avatar", name)
	_, _ = fw.Write(data)
	_ = w.Close()
	req, _ := http.NewRequest("POST", c.b.ts.URL+"/admin/settings/avatar", &body)
	req.Header.Set("Content-Type", w.FormDataContentType())
	req.Header.Set("X-Forwarded-For", c.ip)
	resp, err := c.http.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	resp.Body.Close()
	return adminPage{status: resp.StatusCode, header: resp.Header}
}

func testPNG(t *testing.T, side int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, side, side))
	for i := range img.Pix {
		img.Pix[i] = byte(i * 7)
	}
	img.Set(0, 0, color.RGBA{1, 2, 3, 255})
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestAdminAvatarUpload: an owner uploads the bot's picture; Parley serves
// it publicly at a versioned address, cached for a year and revalidated by
// ETag, and the widget's settings point at it. Files that are not pictures,
// pictures too large and SVG (which can carry script) are refused in plain
// words; removing the picture brings the initial back.
func TestAdminAvatarUpload(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.atItsAddress()
	ten, other := b.ownedTenant(t, "starter"), b.ownedTenant(t, "starter")
	c := b.newAdminClient(t)
	c.signIn(ten)
	c.get("/admin/settings/widget")

	refused := func(name string, data []byte, want string) {
		t.Helper()
		p := c.uploadAvatar(name, data)
		if p.status != http.StatusSeeOther {
			t.Fatalf("%s: status %d", name, p.status)
		}
		if got := c.get("/admin/settings/widget").text(".flash.error"); !strings.Contains(got, want) {
			t.Errorf("%s: message %q, want %q", name, got, want)
		}
		if got := b.tenantNow(t, ten.Slug).BotAvatar; got != nil {
			t.Errorf("%s: avatar set to %q", name, *got)
		}
	}
	refused("notes.txt", []byte("just some text, not a picture"), "not a picture Parley can show")
	refused("logo.svg", []byte(`<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`), "not a picture Parley can show")
	big := append(testPNG(t, 8), make([]byte, 512<<10)...) // a PNG header, over 512 KiB
	refused("big.png", big, "too large: at most 512 KB")

	pic := testPNG(t, 64)
	if p := c.uploadAvatar("me.png", pic); p.status != http.StatusSeeOther {
		t.Fatalf("upload: status %d", p.status)
	}
	page := c.get("/admin/settings/widget")
	if got := page.text(".flash.ok"); got != "Avatar uploaded: the chat shows it now." {
		t.Errorf("flash = %q", got)
	}
	addr := strOrEmpty(b.tenantNow(t, ten.Slug).BotAvatar)
	if !strings.HasPrefix(addr, b.ts.URL+"/avatars/"+ten.Slug+"?v=") {
		t.Fatalf("botAvatar = %q", addr)
	}
	if src := page.doc.Find("img.avatar-current").AttrOr("src", ""); src != addr {
		t.Errorf("the page shows %q", src)
	}
	// The widget's settings point at it.
	if _, body, _ := b.getWidgetSettings(t, "/chat/"+ten.Slug+"/widget", nil); body["bot"].(map[string]any)["avatar"] != addr {
		t.Errorf("widget settings avatar = %v", body["bot"].(map[string]any)["avatar"])
	}

	// Served as uploaded, public, immutable at its versioned address.
	client := b.ts.Client()
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
	req, _ := http.NewRequest("GET", b.ts.URL+"/avatars/"+ten.Slug, nil)
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
		r, err := client.Get(b.ts.URL + "/avatars/" + slug)
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		if r.StatusCode != http.StatusNotFound {
			t.Errorf("/avatars/%s: %d, want 404", slug, r.StatusCode)
		}
	}

	// Removing it.
	c.get("/admin/settings/widget")
	if p := c.submit("/admin/settings/avatar?action=remove", url.Values{}); p.status != http.StatusSeeOther {
		t.Fatalf("remove: %d", p.status)
	}
	if got := b.tenantNow(t, ten.Slug).BotAvatar; got != nil {
		t.Errorf("after removing, botAvatar = %q", *got)
	}
	if r, _ := client.Get(addr); r != nil {
		r.Body.Close()
		if r.StatusCode != http.StatusNotFound {
			t.Errorf("after removing, the picture answers %d", r.StatusCode)
		}
	}
}
