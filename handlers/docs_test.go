package handlers

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"
)

// TestDocs_routes serves a stand-in of the API reference's files: the page
// at /docs and /docs/, its files under /docs/, and a missing file as the
// envelope's 404, whose HEAD has the GET's headers.
func TestDocs_routes(t *testing.T) {
	h := New(Deps{Docs: fstest.MapFS{
		"index.html":  {Data: []byte("<!doctype html><title>reference</title>")},
		"viewer/v.js": {Data: []byte("window.v = 1;\n")},
	}})
	serve := func(method, path string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(method, path, nil))
		return rec
	}
	for _, c := range []struct{ path, ctype, body string }{
		{"/docs", "text/html", "<!doctype html><title>reference</title>"},
		{"/docs/", "text/html", "<!doctype html><title>reference</title>"},
		{"/docs/viewer/v.js", "text/javascript", "window.v = 1;\n"},
	} {
		rec := serve(http.MethodGet, c.path)
		if ct := rec.Header().Get("Content-Type"); rec.Code != http.StatusOK || !strings.HasPrefix(ct, c.ctype) || rec.Body.String() != c.body {
			t.Errorf("GET %s: %d %s %q, want 200 %s %q", c.path, rec.Code, ct, rec.Body.String(), c.ctype, c.body)
		}
	}
	get, head := serve(http.MethodGet, "/docs/missing.js"), serve(http.MethodHead, "/docs/missing.js")
	if get.Code != http.StatusNotFound || get.Header().Get("Content-Type") != "application/json" {
		t.Errorf("GET of a missing file: %d %s, want the 404 envelope", get.Code, get.Header().Get("Content-Type"))
	}
	for _, k := range []string{"Content-Type", "Content-Length"} {
		if head.Code != get.Code || head.Header().Get(k) != get.Header().Get(k) {
			t.Errorf("HEAD of a missing file: %d %s %q, GET: %d %q", head.Code, k, head.Header().Get(k), get.Code, get.Header().Get(k))
		}
	}
	if rec := serve(http.MethodGet, "/docsx"); rec.Code != http.StatusNotFound {
		t.Errorf("GET /docsx: %d, want 404 (no route)", rec.Code)
	}
}
