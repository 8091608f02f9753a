package main

import (
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/recsys-engine/recsys/web"
)

// The API reference page (GET /docs, web/apidocs) renders openapi.yaml with
// the Swagger UI files embedded in the binary. These tests check that the
// server answers the page and its files without a key, that the page shows
// every operation of the contract in a browser, and that it loads nothing
// from another host.

// docsAssets are the same-origin URLs index.html loads (its src and href
// attributes), and it fails on one that names another host or scheme.
func docsAssets(t *testing.T, page []byte) []string {
	t.Helper()
	var out []string
	for _, m := range regexp.MustCompile(`(?:src|href)="([^"]*)"`).FindAllSubmatch(page, -1) {
		ref := string(m[1])
		switch {
		case strings.HasPrefix(ref, "data:"):
		case strings.HasPrefix(ref, "/") && !strings.HasPrefix(ref, "//"):
			out = append(out, ref)
		default:
			t.Errorf("index.html refers to %q: the page must load only from its own server, by absolute path", ref)
		}
	}
	return out
}

// TestDocs_served checks, on a server with keys, that GET /docs and
// GET /docs/ answer the page without a key, and that every file the page
// loads is answered from the binary with its type.
func TestDocs_served(t *testing.T) {
	a := startApp(t, func(c *Config) { c.AppKey, c.AdminKey = testAppKey, testAdminKey })
	docs := web.APIDocs()
	get := func(path string) (*http.Response, []byte) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, a.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		return send(t, req)
	}
	page, err := fs.ReadFile(docs, "index.html")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/docs", "/docs/"} {
		resp, body := get(p)
		if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || !strings.HasPrefix(ct, "text/html") {
			t.Fatalf("GET %s: %d %s, want 200 text/html", p, resp.StatusCode, ct)
		}
		if string(body) != string(page) {
			t.Errorf("GET %s does not answer the embedded index.html", p)
		}
	}

	types := map[string]string{".js": "text/javascript", ".css": "text/css"}
	assets := docsAssets(t, page)
	for _, want := range []string{"/docs/init.js", "/docs/swagger-ui/swagger-ui-bundle.js", "/docs/swagger-ui/swagger-ui.css"} {
		if !slices.Contains(assets, want) {
			t.Errorf("index.html does not load %s (it loads %q)", want, assets)
		}
	}
	// The licence ships with the files it covers.
	assets = append(assets, "/docs/swagger-ui/LICENSE", "/docs/swagger-ui/NOTICE")
	for _, p := range assets {
		if p == "/openapi.yaml" {
			continue // the contract, checked by TestOpenAPI_served
		}
		name, ok := strings.CutPrefix(p, "/docs/")
		if !ok {
			t.Errorf("index.html loads %s, which is not under /docs/", p)
			continue
		}
		want, err := fs.ReadFile(docs, name)
		if err != nil {
			t.Errorf("%s is not embedded: %v", name, err)
			continue
		}
		resp, body := get(p)
		if resp.StatusCode != http.StatusOK || string(body) != string(want) {
			t.Errorf("GET %s: %d and %d bytes, want 200 and the %d embedded bytes", p, resp.StatusCode, len(body), len(want))
		}
		for ext, ct := range types {
			if strings.HasSuffix(p, ext) && !strings.HasPrefix(resp.Header.Get("Content-Type"), ct) {
				t.Errorf("GET %s: Content-Type %q, want %s", p, resp.Header.Get("Content-Type"), ct)
			}
		}
	}
	if resp, _ := get("/docs/swagger-ui/missing.js"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET of a file the page does not have: %d, want 404", resp.StatusCode)
	}
}

// TestDocs_pinnedVersion checks that web/apidocs/README.md names the
// version of Swagger UI that the embedded bundle is.
func TestDocs_pinnedVersion(t *testing.T) {
	bundle, err := fs.ReadFile(web.APIDocs(), "swagger-ui/swagger-ui-bundle.js")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`PACKAGE_VERSION:"([0-9][^"]*)"`).FindSubmatch(bundle)
	if m == nil {
		t.Fatal("the bundle states no PACKAGE_VERSION")
	}
	readme, err := os.ReadFile("web/apidocs/README.md")
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("`swagger-ui-dist`, version\n  **%s**", m[1]); !strings.Contains(string(readme), want) {
		t.Errorf("web/apidocs/README.md does not say the bundle is swagger-ui-dist %s", m[1])
	}
}

// TestDocs_browser opens /docs in headless Chromium, keyless on a server with
// keys, waits for Swagger UI to render the contract and checks that every
// operation of openapi.yaml shows with its method and path, that nothing
// failed (no console error, no violation of the page's
// Content-Security-Policy, no failed request), and that every request went
// to the server itself.
func TestDocs_browser(t *testing.T) {
	chrome := findChromium(t)
	c := loadContract(t)
	var want []string
	for path, item := range c.doc.Paths.Map() {
		for method := range item.Operations() {
			want = append(want, method+" "+path)
		}
	}
	slices.Sort(want)

	a := startApp(t, func(c *Config) { c.AppKey, c.AdminKey = testAppKey, testAdminKey })
	ctx, blog := startBrowser(t, chrome, a.URL)
	d := &dash{t: t, ctx: ctx, log: blog, shot: t.TempDir(), last: time.Now()}
	d.setViewport(1280, 900, false)
	d.do("load /docs", 30*time.Second, chromedp.Navigate(a.URL+"/docs"))
	d.waitFor("the viewer renders", "#swagger-ui .opblock", 30*time.Second)
	d.step("the viewer rendered")

	// Each operation's block, as the reader sees it: the method and the
	// path (Swagger UI breaks a long path with zero-width spaces).
	shown := `[...document.querySelectorAll('#swagger-ui .opblock')].map((b) =>
		b.querySelector('.opblock-summary-method')?.textContent.trim() + ' ' +
		b.querySelector('.opblock-summary-path')?.textContent.replace(/\u200b/g, '').trim())`
	var missing []string
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		got := evalJS[[]string](d, "the operations shown", shown)
		missing = slices.DeleteFunc(slices.Clone(want), func(op string) bool { return slices.Contains(got, op) })
		if len(missing) == 0 || time.Now().After(deadline) {
			break
		}
	}
	if len(missing) > 0 {
		t.Errorf("/docs does not show %d of the contract's %d operations:\n  %s", len(missing), len(want), strings.Join(missing, "\n  "))
	}
	d.step(fmt.Sprintf("looked for the %d operations on the page", len(want)))

	// Give late requests a moment, then judge.
	time.Sleep(300 * time.Millisecond)
	blog.mu.Lock()
	urls := slices.Clone(blog.urls)
	blog.mu.Unlock()
	base, err := url.Parse(a.URL)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range urls {
		u, err := url.Parse(s)
		if err != nil || u.Scheme != "data" && (u.Scheme != base.Scheme || u.Host != base.Host) {
			t.Errorf("the page sent a request to another host: %s", s)
		}
	}
	// The log must have seen the page's own loads, or the check above
	// checked nothing.
	for _, p := range []string{"/docs", "/docs/swagger-ui/swagger-ui-bundle.js", "/docs/init.js", "/openapi.yaml"} {
		if !slices.Contains(urls, a.URL+p) {
			t.Errorf("no request for %s was seen; the page requested %q", p, urls)
		}
	}
	for _, p := range blog.list() {
		t.Error(p)
	}
}
