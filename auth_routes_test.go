package main

import (
	"encoding/json"
	"io/fs"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"

	"recsys/api"
	"recsys/web"
)

// routeAccess is what a route requires, decided by rule rather than by a
// list, so that a route added later is checked without editing this test.
type routeAccess int

const (
	accessPublic routeAccess = iota // health, metrics, the spec, the dashboard
	accessApp                       // data routes: app or admin key
	accessAdmin                     // /admin/* and every DELETE: admin key only
)

// publicPaths need no key (SPEC.md §9: probes and metrics must be
// scrapeable; the dashboard's static files hold no data).
var publicPaths = map[string]bool{"/healthz": true, "/readyz": true, "/metrics": true, "/openapi.yaml": true, "/": true}

func accessOf(method, path string) routeAccess {
	switch {
	case strings.HasPrefix(path, "/admin/") || method == http.MethodDelete:
		return accessAdmin
	case publicPaths[path] || isDashboardFile(path):
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

// TestAuth_everyRoute walks the live router's route table and sends every
// registered (method, route) with no key, a wrong key, the app key and the
// admin key: guarded routes answer 401 without a key and 403 with a wrong
// one; admin routes (under /admin/ and every DELETE) answer 403 to the app
// key; the right key is never refused. A new route is covered by this test
// as soon as it is registered.
func TestAuth_everyRoute(t *testing.T) {
	const appKey, adminKey = "app-secret-1", "admin-secret-2"
	a := startApp(t, func(c *Config) { c.AppKey, c.AdminKey = appKey, adminKey })
	routes, ok := a.srv.Handler.(chi.Routes)
	if !ok {
		t.Fatalf("the server's handler is %T, not a chi router", a.srv.Handler)
	}
	type route struct{ method, pattern, path string }
	var all []route
	err := chi.Walk(routes, func(method, pattern string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		p := strings.ReplaceAll(pattern, "/*/", "/")
		if p != "/" {
			p = strings.TrimSuffix(p, "/")
		}
		p = strings.ReplaceAll(routeParam.ReplaceAllString(p, "x1"), "*", "x1")
		all = append(all, route{method, pattern, p})
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
	if counts[accessAdmin] < 9 || counts[accessApp] < 10 {
		t.Fatalf("route walk found %d admin and %d app routes: %v", counts[accessAdmin], counts[accessApp], all)
	}

	send := func(t *testing.T, r route, hdr ...string) (int, api.ErrorOut) {
		t.Helper()
		var body []byte
		if r.method == http.MethodPost || r.method == http.MethodPut {
			body = []byte(`{}`)
		}
		status, b := a.do(t, r.method, r.path, "application/json", body, hdr...)
		var out api.ErrorOut
		_ = json.Unmarshal(b, &out)
		return status, out
	}
	for _, r := range all {
		access := accessOf(r.method, r.path)
		t.Run(r.method+" "+r.pattern, func(t *testing.T) {
			if access == accessPublic {
				if status, _ := send(t, r); status == http.StatusUnauthorized || status == http.StatusForbidden {
					t.Fatalf("public route refused without a key: %d", status)
				}
				return
			}
			if status, out := send(t, r); status != http.StatusUnauthorized || out.Error.Code != api.CodeUnauthorized {
				t.Errorf("no key: %d %q, want 401 unauthorized", status, out.Error.Code)
			}
			if status, out := send(t, r, "Authorization", "Bearer wrong-key"); status != http.StatusForbidden || out.Error.Code != api.CodeForbidden {
				t.Errorf("wrong key: %d %q, want 403 forbidden", status, out.Error.Code)
			}
			status, out := send(t, r, "X-API-Key", appKey)
			switch {
			case access == accessAdmin && (status != http.StatusForbidden || !strings.Contains(out.Error.Message, "admin key")):
				t.Errorf("app key on an admin route: %d %+v, want 403 naming the admin key", status, out.Error)
			case access == accessApp && (status == http.StatusUnauthorized || status == http.StatusForbidden):
				t.Errorf("app key on a data route: %d %+v", status, out.Error)
			}
			for _, hdr := range [][]string{{"Authorization", "Bearer " + adminKey}, {"X-API-Key", adminKey}} {
				if status, out := send(t, r, hdr...); status == http.StatusUnauthorized || status == http.StatusForbidden {
					t.Errorf("admin key via %s: %d %+v", hdr[0], status, out.Error)
				}
			}
		})
	}
}
