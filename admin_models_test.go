package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/recsys"
	"github.com/recsys-engine/recsys/recsys/content"
)

// jobCount is how many job records the store holds.
func (a *testApp) jobCount(tb testing.TB) int {
	tb.Helper()
	js, err := a.store.Jobs(context.Background(), 1000)
	if err != nil {
		tb.Fatal(err)
	}
	return len(js)
}

// wantFieldError checks a 400 invalid answer naming field, whose message
// contains every one of parts.
func wantFieldError(tb testing.TB, status int, body []byte, field string, parts ...string) {
	tb.Helper()
	var e api.ErrorOut
	if err := json.Unmarshal(body, &e); err != nil {
		tb.Fatalf("status %d, body %s: %v", status, body, err)
	}
	if status != http.StatusBadRequest || e.Error.Code != api.CodeInvalid || len(e.Error.Details) != 1 || e.Error.Details[0].Field != field {
		tb.Fatalf("answer %d %s, want 400 invalid naming %s", status, body, field)
	}
	for _, p := range parts {
		if !strings.Contains(e.Error.Message, p) {
			tb.Errorf("message %q does not say %q", e.Error.Message, p)
		}
	}
}

// TestEvaluation_modelNames: an evaluation that names no models evaluates
// the recommenders among the server's models (not the content metric,
// which the protocol cannot evaluate), and one that names the content
// metric, an unknown model or a model twice is refused at the request,
// naming the entry and listing the models that can be evaluated, with no
// job started.
func TestEvaluation_modelNames(t *testing.T) {
	a := startApp(t, func(c *Config) { c.Jobs.Models = []string{"popular", "content", "itemknn"} })
	a.load(t, clustered(60, 40, 8, 3, 3))
	recommenders := strings.Join(recsys.Names(), ", ")

	for _, tc := range []struct {
		name, body, field string
		parts             []string
	}{
		{"content", `{"models":["content"]}`, "models[0]", []string{`"content" is not a recommender`, recommenders}},
		{"content after another", `{"models":["popular","content"]}`, "models[1]", []string{`"content" is not a recommender`, recommenders}},
		{"unknown", `{"models":["no-such-model"]}`, "models[0]", []string{`unknown model "no-such-model"`, recommenders}},
		{"repeated", `{"models":["popular","itemknn","popular"]}`, "models[2]", []string{`repeats models[0]`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := a.jobCount(t)
			status, body := a.do(t, http.MethodPost, "/admin/evaluations", "application/json", []byte(tc.body))
			wantFieldError(t, status, body, tc.field, tc.parts...)
			if n := a.jobCount(t); n != before {
				t.Errorf("%d job records after a refused request, want %d", n, before)
			}
		})
	}

	for _, tc := range []struct{ name, ctype, body string }{
		{"no body", "", ""},
		{"empty object", "application/json", `{}`},
		{"empty list", "application/json", `{"models":[],"folds":1}`},
	} {
		t.Run("default "+tc.name, func(t *testing.T) {
			status, body := a.do(t, http.MethodPost, "/admin/evaluations", tc.ctype, []byte(tc.body))
			var acc api.JobAccepted
			if status != http.StatusAccepted || json.Unmarshal(body, &acc) != nil {
				t.Fatalf("answer %d %s, want 202", status, body)
			}
			j := waitJob(t, a.getter(t), acc.JobID, 2*time.Minute, api.Job.Done)
			if j.State != api.JobSucceeded || !slices.Equal(j.Models, []string{"popular", "itemknn"}) || j.ReportID == "" {
				t.Fatalf("default evaluation: %+v, want popular and itemknn evaluated (the content metric left out)", j)
			}
		})
	}
}

// TestEvaluation_noRecommenderAmongDefaults: with the content metric as
// the server's only model, an evaluation that names none is a 400 that
// says so, not a job doomed to fail.
func TestEvaluation_noRecommenderAmongDefaults(t *testing.T) {
	a := startApp(t, func(c *Config) { c.Jobs.Models = []string{"content"} })
	status, body := a.do(t, http.MethodPost, "/admin/evaluations", "", nil)
	wantFieldError(t, status, body, "models", "include no recommender", strings.Join(recsys.Names(), ", "))
	if n := a.jobCount(t); n != 0 {
		t.Errorf("%d job records after a refused request, want none", n)
	}
}

// TestRetrain_modelNames: a retrain that names a model twice (which would
// fit it twice and evict its previous good version) or an unknown model is
// a 400 naming the entry, with no job started; server models listed twice
// are trained once.
func TestRetrain_modelNames(t *testing.T) {
	a := startApp(t, func(c *Config) { c.Jobs.Models = []string{"popular", "popular"} })
	a.load(t, clustered(60, 40, 8, 3, 4))
	trainable := strings.Join(recsys.Kinds(), ", ")
	for _, tc := range []struct {
		name, body, field string
		parts             []string
	}{
		{"repeated", `{"models":["slim","slim"]}`, "models[1]", []string{`repeats models[0] ("slim")`}},
		{"repeated content", `{"models":["content","popular","content"]}`, "models[2]", []string{`repeats models[0] ("content")`}},
		{"unknown", `{"models":["popular","no-such-model"]}`, "models[1]", []string{`unknown model "no-such-model"`, trainable}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := a.do(t, http.MethodPost, "/admin/retrain", "application/json", []byte(tc.body))
			wantFieldError(t, status, body, tc.field, tc.parts...)
			if n := a.jobCount(t); n != 0 {
				t.Errorf("%d job records after refused requests, want none", n)
			}
		})
	}
	t.Run("server models listed twice", func(t *testing.T) {
		status, body := a.do(t, http.MethodPost, "/admin/retrain", "", nil)
		var acc api.JobAccepted
		if status != http.StatusAccepted || json.Unmarshal(body, &acc) != nil {
			t.Fatalf("answer %d %s, want 202", status, body)
		}
		j := waitJob(t, a.getter(t), acc.JobID, time.Minute, api.Job.Done)
		if j.State != api.JobSucceeded || !slices.Equal(j.Models, []string{"popular"}) || len(j.Versions) != 1 {
			t.Fatalf("default retrain: %+v, want popular trained once", j)
		}
	})
}

// TestRetrain_contentSkippedSaysWhy: a retrain asked for the content metric
// that could not learn it succeeds with the reason in the job's skipped
// list: first with no item features, then with too few items that have
// them.
func TestRetrain_contentSkippedSaysWhy(t *testing.T) {
	a := startApp(t, nil)
	a.load(t, clustered(60, 40, 8, 3, 5))
	check := func(t *testing.T, reason string) {
		t.Helper()
		j := waitJob(t, a.getter(t), a.retrain(t, "popular", "content"), time.Minute, api.Job.Done)
		if j.State != api.JobSucceeded || len(j.Versions) != 1 || !strings.HasPrefix(j.Versions[0], "popular@") {
			t.Fatalf("job %+v, want popular trained alone", j)
		}
		if len(j.Skipped) != 1 || j.Skipped[0].Model != content.Name || !strings.Contains(j.Skipped[0].Reason, reason) {
			t.Fatalf("skipped %+v, want content skipped because %q", j.Skipped, reason)
		}
	}
	t.Run("no item features", func(t *testing.T) { check(t, "no item has features") })
	t.Run("too few items with features", func(t *testing.T) {
		var items []api.Item
		for i := range 5 {
			items = append(items, api.Item{ID: fmt.Sprintf("i%d", i), Features: map[string]float64{"a": float64(i), "b": 1}})
		}
		if err := a.store.PutItems(context.Background(), items); err != nil {
			t.Fatal(err)
		}
		check(t, "only 5 items have both features and collaborative neighbours; learning the metric needs at least 20")
	})
}

// TestModels_listsNames: GET /models says which names a retrain and an
// evaluation accept and which are the server's defaults, from the
// registry; the dashboard offers those.
func TestModels_listsNames(t *testing.T) {
	a := startApp(t, func(c *Config) { c.Jobs.Models = []string{"popular", "content"} })
	var out api.ModelsOut
	if status := a.getJSON(t, "/models", &out); status != http.StatusOK {
		t.Fatalf("GET /models: %d", status)
	}
	if !slices.Equal(out.Trainable, recsys.Kinds()) || !slices.Contains(out.Trainable, "content") {
		t.Errorf("trainable %q, want %q", out.Trainable, recsys.Kinds())
	}
	if !slices.Equal(out.Recommenders, recsys.Names()) || slices.Contains(out.Recommenders, "content") {
		t.Errorf("recommenders %q, want %q (no content)", out.Recommenders, recsys.Names())
	}
	if !slices.Equal(out.Defaults, []string{"popular", "content"}) {
		t.Errorf("defaults %q, want the server's models", out.Defaults)
	}
	status, body := a.do(t, http.MethodPost, "/admin/models/content/activate", "", nil)
	if status != http.StatusNotFound || !strings.Contains(string(body), "not a recommender") {
		t.Errorf("activating content: %d %s, want 404 saying it is not a recommender", status, body)
	}
}
