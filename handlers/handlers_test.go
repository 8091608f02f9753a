package handlers

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestMethodNotAllowed_allowHeader(t *testing.T) {
	h := New(Deps{Interactions: &fakeStore{}, Users: &fakeStore{}})
	cases := []struct{ method, path, allow string }{
		{http.MethodPost, "/items/x", "DELETE, GET, HEAD, PATCH, PUT"},
		{http.MethodGet, "/interactions", "POST"},
		{http.MethodPost, "/users/u/recommendations", "GET, HEAD"},
		{http.MethodPut, "/items", "GET, HEAD, POST"},
	}
	for _, c := range cases {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(c.method, c.path, nil))
		if rec.Code != http.StatusMethodNotAllowed || rec.Header().Get("Allow") != c.allow {
			t.Errorf("%s %s: %d Allow %q, want 405 Allow %q", c.method, c.path, rec.Code, rec.Header().Get("Allow"), c.allow)
		}
	}
}
