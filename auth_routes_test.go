package main

import (
	"encoding/json"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/handlers"
	"github.com/recsys-engine/recsys/web"
)

// routeAccess is what a route requires, decided by rule rather than by a
// list, so that a route added later is checked without editing this test.
type routeAccess int

const (
	accessPublic routeAccess = iota // health, metrics, the spec and its reference page, the dashboard
	accessApp                       // data routes and erasure (DELETE under /users/): app or admin key
	accessAdmin                     // /admin/* and every other DELETE: admin key only
)

// publicPaths need no key (docs/design.md#keys: probes and metrics must be
// scrapeable; the dashboard's static files and the API reference page hold
// no data).
var publicPaths = map[string]bool{"/healthz": true, "/readyz": true, "/version": true, "/metrics": true, "/openapi.yaml": true, "/": true,
	"/docs": true}

func accessOf(method, path string) routeAccess {
	switch {
	case strings.HasPrefix(path, "/admin/") || method == http.MethodDelete && !strings.HasPrefix(path, "/users/"):
		return accessAdmin
	case publicPaths[path] || isDashboardFile(path) || strings.HasPrefix(path, "/docs/"):
		return accessPublic
	}
	return accessApp
}

// isDashboardFile tells whether path's first segment is an embedded
// dashboard file or folder.
func isDashboardFile(path string) bool {
	first, _, _ := strings.Cut(strings.TrimPrefix(path, "/"), "/")
	if first == "" {
		return false
	}
	_, err := fs.Stat(web.FS(), first)
	return err == nil
}

var routeParam = regexp.MustCompile(`\{[^}]+\}`)

// authRoute is one registered route, with a concrete path to send.
type authRoute struct{ method, pattern, path string }

// walkRoutes lists the live router's routes with their parameters filled.
func walkRoutes(t *testing.T, h http.Handler) []authRoute {
	t.Helper()
	routes, ok := h.(chi.Routes)
	if !ok {
		t.Fatalf("the server's handler is %T, not a chi router", h)
	}
	var all []authRoute
	err := chi.Walk(routes, func(method, pattern string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		p := strings.ReplaceAll(pattern, "/*/", "/")
		if p != "/" {
			p = strings.TrimSuffix(p, "/")
		}
		p = strings.ReplaceAll(routeParam.ReplaceAllString(p, "x1"), "*", "x1")
		all = append(all, authRoute{method, pattern, p})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	counts := map[routeAccess]int{}
	for _, r := range all {
		counts[accessOf(r.method, r.path)]++
	}
	// The walk must have found the admin surface; fewer means the router
	// changed shape and this test would be checking nothing.
	if counts[accessAdmin] < 9 || counts[accessApp] < 10 || counts[accessPublic] < 5 {
		t.Fatalf("route walk found %d admin, %d app and %d public routes: %v",
			counts[accessAdmin], counts[accessApp], counts[accessPublic], all)
	}
	return all
}

// authOutcome is what one request must get: an auth refusal (status and
// code), or the route's own answer (open), which is never 401 or 403.
type authOutcome struct {
	status int
	code   string
}

var (
	open          = authOutcome{}
	noKey         = authOutcome{http.StatusUnauthorized, api.CodeUnauthorized}
	badKey        = authOutcome{http.StatusForbidden, api.CodeForbidden}
	adminDisabled = authOutcome{http.StatusForbidden, api.CodeAdminDisabled}
)

// testAppKey and testAdminKey are the keys the tests start servers with:
// distinct, and as long as serve requires (MinKeyBytes).
const testAppKey, testAdminKey = "app-secret-0123456789", "admin-secret-0123456789"

// presented are the keys a client may send: none, the application key,
// the admin key and one the server never had. A key the server was not
// started with is, to it, a wrong key.
var presented = []struct{ name, key string }{
	{"no key", ""}, {"app key", testAppKey}, {"admin key", testAdminKey}, {"wrong key", "wrong-key-0123456789"},
}

// keyConfig is one way to start the server, and what each route class must
// answer to each presented key (in the order of presented). Public routes
// (health, metrics, the spec, the dashboard) are open in every one.
type keyConfig struct {
	name       string
	app, admin string
	exposed    bool // listens on a non-loopback address (--insecure)
	appRoutes  [4]authOutcome
	adminRoute [4]authOutcome
}

var keyConfigs = []keyConfig{
	{name: "no keys on loopback",
		appRoutes:  [4]authOutcome{open, open, open, open},
		adminRoute: [4]authOutcome{open, open, open, open}},
	{name: "app key only", app: testAppKey,
		appRoutes:  [4]authOutcome{noKey, open, badKey, badKey},
		adminRoute: [4]authOutcome{adminDisabled, adminDisabled, adminDisabled, adminDisabled}},
	{name: "admin key only", admin: testAdminKey,
		appRoutes:  [4]authOutcome{noKey, badKey, open, badKey},
		adminRoute: [4]authOutcome{noKey, badKey, open, badKey}},
	{name: "both keys", app: testAppKey, admin: testAdminKey,
		appRoutes:  [4]authOutcome{noKey, open, open, badKey},
		adminRoute: [4]authOutcome{noKey, badKey, open, badKey}},
	// The App refuses a non-loopback address with no keys unless
	// --insecure; this is what the handler then does, built through Deps.
	{name: "no keys, non-loopback", exposed: true,
		appRoutes:  [4]authOutcome{open, open, open, open},
		adminRoute: [4]authOutcome{adminDisabled, adminDisabled, adminDisabled, adminDisabled}},
}

// TestAuth_everyRoute walks the live router's route table and sends every
// registered (method, route), under every key configuration (none, app
// only, admin only, both, and no keys on a non-loopback address), with no
// key, the application key, the admin key and a wrong key, each key both
// as "Authorization: Bearer" and as "X-API-Key". A refusal must have the
// exact status and code of the table; an allowed request must get the
// route's own answer, never 401 or 403. Admin routes (under /admin/ and
// every DELETE but a user's erasure) are never open without the admin key
// once a key is set or the address is not loopback: with no admin key they
// are 403 admin_disabled, whatever the client sends. Erasing a user or a
// user's pair (DELETE under /users/) is a data route: the application key
// does it. A new route is covered by this test as soon as it is registered.
func TestAuth_everyRoute(t *testing.T) {
	for _, kc := range keyConfigs {
		t.Run(kc.name, func(t *testing.T) {
			a := startApp(t, func(c *Config) { c.AppKey, c.AdminKey = kc.app, kc.admin })
			if kc.exposed {
				deps := a.deps
				deps.Keys.Exposed = true
				deps.Registry = nil // a private one: the App's already holds the metrics
				srv := httptest.NewServer(handlers.New(deps))
				t.Cleanup(srv.Close)
				a = &testApp{App: a.App, URL: srv.URL, stop: a.stop}
			}
			checkEveryRoute(t, a, kc)
		})
	}
}

func checkEveryRoute(t *testing.T, a *testApp, kc keyConfig) {
	send := func(t *testing.T, r authRoute, hdr ...string) (int, api.ErrorOut) {
		t.Helper()
		var body []byte
		if r.method == http.MethodPost || r.method == http.MethodPut || r.method == http.MethodPatch {
			body = []byte(`{}`)
		}
		status, b := a.do(t, r.method, r.path, "application/json", body, hdr...)
		var out api.ErrorOut
		_ = json.Unmarshal(b, &out)
		return status, out
	}
	for _, r := range walkRoutes(t, a.srv.Handler) {
		access := accessOf(r.method, r.path)
		t.Run(r.method+" "+r.pattern, func(t *testing.T) {
			for k, p := range presented {
				want := open
				switch access {
				case accessApp:
					want = kc.appRoutes[k]
				case accessAdmin:
					want = kc.adminRoute[k]
				}
				headers := [][]string{nil}
				if p.key != "" {
					headers = [][]string{{"Authorization", "Bearer " + p.key}, {"X-API-Key", p.key}}
				}
				for _, hdr := range headers {
					status, out := send(t, r, hdr...)
					switch {
					case want == open && (status == http.StatusUnauthorized || status == http.StatusForbidden):
						t.Errorf("%s %v: %d %+v, want the route's own answer", p.name, hdr, status, out.Error)
					case want != open && (status != want.status || out.Error.Code != want.code):
						t.Errorf("%s %v: %d %q, want %d %q", p.name, hdr, status, out.Error.Code, want.status, want.code)
					case want == adminDisabled && !strings.Contains(out.Error.Message, "--admin-key"):
						t.Errorf("%s: admin_disabled message %q does not say how to enable the routes", p.name, out.Error.Message)
					case want == badKey && p.key == kc.app && access == accessAdmin && !strings.Contains(out.Error.Message, "admin key"):
						t.Errorf("app key on an admin route: %q does not name the admin key", out.Error.Message)
					}
				}
			}
		})
	}
}
