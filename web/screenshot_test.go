package web

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/chromedp/chromedp"
)

// screenshotDir is where browser tests keep their screenshots: the
// directory PARLEY_TEST_ARTIFACTS names (a relative one from the module
// root, such as artifacts/screenshots, which git ignores). .ci/run sets it
// and prints it after the tests.
func screenshotDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("PARLEY_TEST_ARTIFACTS")
	if filepath.IsAbs(dir) {
		return dir
	}
	if dir == "" {
		dir = filepath.Join("artifacts", "screenshots")
	}
	return filepath.Join(moduleRoot(t), dir)
}

// moduleRoot is the nearest directory above the test's holding go.mod.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// saveScreenshot keeps a full-page PNG of the tab as name.png in
// screenshotDir, for a person to look at: the test asserts behaviour, the
// picture shows how it looks. Other tests of the same name overwrite it.
//
// Pictures are taken only when PARLEY_TEST_ARTIFACTS is set (.ci/run sets
// it): a full-page PNG costs Chromium a few hundred milliseconds of CPU, and
// the suite takes about sixty of them, which a developer's make test is
// spared.
func saveScreenshot(ctx context.Context, t *testing.T, name string) {
	t.Helper()
	if os.Getenv("PARLEY_TEST_ARTIFACTS") == "" {
		return
	}
	png := mustRunStep(ctx, t, "screenshot "+name, chromedp.FullScreenshot(100))
	dir := screenshotDir(t)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, unsafeName.ReplaceAllString(name, "-")+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}
