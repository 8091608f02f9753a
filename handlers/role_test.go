package handlers

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/recsys-engine/recsys/api"
)

// A train process (Deps.TrainOnly) answers the health, metrics and admin
// routes as any server does, and every other route 404 with a message
// naming its role, before any service is called; the same handler without
// TrainOnly answers those routes.
func TestTrainOnly_routes(t *testing.T) {
	type req struct{ method, path, body string }
	answered := []struct {
		req
		status int
	}{
		{req{http.MethodGet, "/healthz", ""}, http.StatusOK},
		{req{http.MethodHead, "/healthz", ""}, http.StatusOK},
		{req{http.MethodGet, "/readyz", ""}, http.StatusOK},
		{req{http.MethodGet, "/metrics", ""}, http.StatusOK},
		{req{http.MethodGet, "/admin/jobs", ""}, http.StatusOK},
		{req{http.MethodPost, "/admin/retrain", `{"models":["itemknn"]}`}, http.StatusAccepted},
	}
	refused := []req{
		{http.MethodGet, "/users/u1/recommendations", ""},
		{http.MethodPost, "/interactions", `{"interactions":[{"user_id":"u","item_id":"i","type":"view"}]}`},
		{http.MethodGet, "/items/i1", ""},
		{http.MethodDelete, "/items/i1", ""},
		{http.MethodGet, "/models", ""},
		{http.MethodGet, "/stats", ""},
		{http.MethodGet, "/openapi.yaml", ""},
		{http.MethodGet, "/", ""},
	}
	send := func(h http.Handler, r req) *httptest.ResponseRecorder {
		q := httptest.NewRequest(r.method, r.path, strings.NewReader(r.body))
		if r.body != "" {
			q.Header.Set("Content-Type", "application/json")
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, q)
		return rec
	}
	f := &recorder{}
	train := New(Deps{Interactions: f, Users: f, Items: f, Stats: f, Recommender: f, Jobs: f,
		JobRecords: f, Models: f, Reports: f, OpenAPI: []byte("openapi: 3.1.0\n"), TrainOnly: true})
	for _, c := range answered {
		if rec := send(train, c.req); rec.Code != c.status {
			t.Errorf("train: %s %s = %d %s; want %d", c.method, c.path, rec.Code, rec.Body, c.status)
		}
	}
	if len(f.jobLimits) != 1 || len(f.trains) != 1 {
		t.Errorf("train: the admin routes reached jobs %d times and retrain %d times; want once each", len(f.jobLimits), len(f.trains))
	}
	f = &recorder{}
	train = New(Deps{Interactions: f, Users: f, Items: f, Stats: f, Recommender: f, Jobs: f,
		JobRecords: f, Models: f, Reports: f, OpenAPI: []byte("openapi: 3.1.0\n"), TrainOnly: true})
	for _, r := range refused {
		rec := send(train, r)
		var out api.ErrorOut
		if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil || rec.Code != http.StatusNotFound ||
			out.Error.Code != api.CodeNotFound || !strings.Contains(out.Error.Message, "--role train") ||
			!strings.Contains(out.Error.Message, r.path) {
			t.Errorf("train: %s %s = %d %s; want 404 not_found naming --role train and the path", r.method, r.path, rec.Code, rec.Body)
		}
	}
	if n := f.calls(); n != 0 {
		t.Errorf("train: %d calls reached the services through refused routes", n)
	}
	all := newRecorderHandler(f)
	for _, r := range refused[:3] {
		if rec := send(all, r); rec.Code >= 300 {
			t.Errorf("without TrainOnly: %s %s = %d %s; want it answered", r.method, r.path, rec.Code, rec.Body)
		}
	}
}
