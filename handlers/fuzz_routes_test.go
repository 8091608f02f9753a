package handlers

import (
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/recsys-engine/recsys/api"
)

// recorder is a fake of every service the handlers call. It records what
// reached it, so a fuzzer can check that a rejected request changed nothing
// and that an accepted one passed on only valid values.
type recorder struct {
	fakeStore
	items     []api.Item
	pages     []api.Page
	recs      []api.RecommendRequest
	reranks   []api.RerankRequest
	similar   []api.SimilarRequest
	searches  []map[string]float64
	searchN   []int
	trains    [][]string
	evals     []api.EvaluationRequest
	jobLimits []int
	days      []int
}

func (f *recorder) calls() int {
	return len(f.added) + len(f.items) + len(f.pages) + len(f.recs) + len(f.reranks) + len(f.similar) + len(f.searches) +
		len(f.trains) + len(f.evals) + len(f.jobLimits) + len(f.days)
}

func (f *recorder) PutItems(_ context.Context, its []api.Item) error {
	f.items = append(f.items, its...)
	return nil
}
func (f *recorder) UpdateItem(_ context.Context, id string, change func(api.Item) (api.Item, error)) (api.Item, error) {
	it, err := change(api.Item{ID: id, Labels: map[string]string{"title": "T"}, Categories: []string{"c"}})
	if err == nil {
		f.items = append(f.items, it)
	}
	return it, err
}
func (f *recorder) Item(_ context.Context, id string) (api.Item, error) { return api.Item{ID: id}, nil }
func (f *recorder) Items(_ context.Context, p api.Page) ([]api.Item, string, error) {
	f.pages = append(f.pages, p)
	return nil, "", nil
}
func (f *recorder) DeleteItem(context.Context, string) error { return nil }
func (f *recorder) Users(_ context.Context, p api.Page) ([]api.User, string, error) {
	f.pages = append(f.pages, p)
	return nil, "", nil
}
func (f *recorder) History(_ context.Context, _ string, p api.Page) ([]api.HistoryEntry, string, error) {
	f.pages = append(f.pages, p)
	return nil, "", nil
}
func (f *recorder) Counts(context.Context) (api.Counts, error) { return api.Counts{}, nil }
func (f *recorder) Activity(_ context.Context, days int) ([]api.DayCount, error) {
	f.days = append(f.days, days)
	return nil, nil
}
func (f *recorder) Recommend(_ context.Context, req api.RecommendRequest) (*api.Recommendations, error) {
	f.recs = append(f.recs, req)
	return &api.Recommendations{UserID: req.UserID, Items: []api.ScoredItem{}}, nil
}
func (f *recorder) Rerank(_ context.Context, req api.RerankRequest) (*api.Recommendations, error) {
	f.reranks = append(f.reranks, req)
	return &api.Recommendations{UserID: req.UserID, Items: []api.ScoredItem{}}, nil
}
func (f *recorder) Similar(_ context.Context, req api.SimilarRequest) (*api.SimilarItems, error) {
	f.similar = append(f.similar, req)
	return &api.SimilarItems{ItemID: req.ItemID, By: req.By, Items: []api.ScoredItem{}}, nil
}
func (f *recorder) SearchSimilar(_ context.Context, feats map[string]float64, n int) (*api.SimilarItems, error) {
	f.searches = append(f.searches, feats)
	f.searchN = append(f.searchN, n)
	return &api.SimilarItems{Items: []api.ScoredItem{}}, nil
}
func (f *recorder) SubmitTrain(_ context.Context, req api.TrainRequest) (api.Job, error) {
	f.trains = append(f.trains, req.Models)
	return api.Job{ID: "j1", State: "queued"}, nil
}
func (f *recorder) SubmitEvaluation(_ context.Context, req api.EvaluationRequest) (api.Job, error) {
	f.evals = append(f.evals, req)
	return api.Job{ID: "j2", State: "queued"}, nil
}
func (f *recorder) Cancel(_ context.Context, id string) (api.Job, error) { return api.Job{ID: id}, nil }
func (f *recorder) Activate(context.Context, string) (string, error)     { return "", nil }
func (f *recorder) ModelNames() api.ModelNames {
	return api.ModelNames{Trainable: []string{"popular"}, Recommenders: []string{"popular"}, Defaults: []string{"popular"}}
}
func (f *recorder) NewJobID(context.Context) (string, error)          { return "j", nil }
func (f *recorder) PutJob(context.Context, api.Job) error             { return nil }
func (f *recorder) Job(_ context.Context, id string) (api.Job, error) { return api.Job{ID: id}, nil }
func (f *recorder) Jobs(_ context.Context, limit int) ([]api.Job, error) {
	f.jobLimits = append(f.jobLimits, limit)
	return nil, nil
}
func (f *recorder) RecoverJobs(context.Context, string) ([]api.Job, int, error) { return nil, 0, nil }
func (f *recorder) PutModel(context.Context, api.ModelInfo, []byte) error       { return nil }
func (f *recorder) Models(context.Context) ([]api.ModelInfo, error)             { return nil, nil }
func (f *recorder) ModelBlob(context.Context, string, string) ([]byte, error) {
	return nil, api.Errorf(api.CodeNotFound, "no model")
}
func (f *recorder) SetActiveModel(context.Context, string) error { return nil }
func (f *recorder) ActiveModel(context.Context) (string, error)  { return "", nil }
func (f *recorder) PutReport(context.Context, *api.Report) error { return nil }
func (f *recorder) Report(_ context.Context, id string) (*api.Report, error) {
	return &api.Report{ID: id}, nil
}
func (f *recorder) Reports(context.Context) ([]*api.Report, error) { return nil, nil }

func newRecorderHandler(f *recorder) http.Handler {
	return New(Deps{Interactions: f, Users: f, Items: f, Stats: f, Recommender: f, Jobs: f,
		JobRecords: f, Models: f, Reports: f})
}

// serveFuzz sends one request and checks the answer is a success or a 4xx
// with the error envelope, and that a 4xx reached no service.
func serveFuzz(t *testing.T, f *recorder, req *http.Request, ok int) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	newRecorderHandler(f).ServeHTTP(rec, req)
	switch {
	case rec.Code == ok:
	case rec.Code >= 400 && rec.Code < 500:
		if n := f.calls(); n != 0 {
			t.Fatalf("status %d but %d calls reached the services", rec.Code, n)
		}
		if !strings.Contains(rec.Body.String(), `"error"`) || !strings.Contains(rec.Body.String(), `"message"`) {
			t.Fatalf("%d without the error envelope: %s", rec.Code, rec.Body)
		}
	default:
		t.Fatalf("%s %s: status %d: %s", req.Method, req.URL, rec.Code, rec.Body)
	}
	return rec
}

func jsonRequest(method, path string, body []byte) *http.Request {
	req := httptest.NewRequest(method, path, strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	return req
}

func checkItem(t *testing.T, it api.Item) {
	t.Helper()
	if api.ValidateID(it.ID) != "" {
		t.Fatalf("invalid item id %q reached the store", it.ID)
	}
	if len(it.Features) > api.MaxFeatures || len(it.Categories) > 100 || len(it.Labels) > 100 {
		t.Fatalf("item %q over the limits reached the store", it.ID)
	}
	for k, v := range it.Features {
		if k == "" || len(k) > 256 || !api.IsFinite(v) {
			t.Fatalf("feature %q=%v reached the store", k, v)
		}
	}
	for _, c := range it.Categories {
		if c == "" || len(c) > 256 {
			t.Fatalf("category %q reached the store", c)
		}
	}
}

// FuzzDecodeItems feeds arbitrary bodies to POST /items (a batch),
// PUT /items/{id} and PATCH /items/{id}: 2xx or a 4xx that stores nothing, never a 5xx; an
// accepted item has a valid id, finite features and bounded lists, and a
// batch is stored whole with no repeated id.
func FuzzDecodeItems(f *testing.F) {
	for _, s := range []string{
		`{"items":[{"id":"i1","features":[1,2,3],"categories":["a"],"labels":{"title":"T"}}]}`,
		`{"items":[{"id":"i1","features":{"x":1.5}},{"id":"i2","hidden":true}]}`,
		`{"items":[{"id":"i1"},{"id":"i1"}]}`,
		`{"items":[]}`, `{"items":[{}]}`, `{"items":null}`, `{"items":[{"id":"a\u0000"}]}`,
		`{"items":[{"id":"i","features":[1e309]}]}`, `{"items":[{"id":"i","features":"x"}]}`,
		`{"items":[{"id":"i","categories":[""]}]}`, `{"items":[{"id":"i","labels":{"":"x"}}]}`,
		`{"id":"i1","features":[0.5]}`, `{"id":"other"}`, `{}`, `[]`, `{"items":[{"id":"i"}]} x`,
		`{"labels":{"title":null}}`, `{"features":null,"hidden":true}`, `{"categories":[""]}`, `{"features":{"a":1e400}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		fs := &recorder{}
		serveFuzz(t, fs, jsonRequest(http.MethodPost, "/items", body), http.StatusCreated)
		seen := map[string]bool{}
		for _, it := range fs.items {
			checkItem(t, it)
			if seen[it.ID] {
				t.Fatalf("item %q stored twice from one batch", it.ID)
			}
			seen[it.ID] = true
		}
		for _, method := range []string{http.MethodPut, http.MethodPatch} {
			fs = &recorder{}
			serveFuzz(t, fs, jsonRequest(method, "/items/i1", body), http.StatusOK)
			for _, it := range fs.items {
				checkItem(t, it)
				if it.ID != "i1" {
					t.Fatalf("%s /items/i1 stored item %q", method, it.ID)
				}
			}
		}
	})
}

// FuzzDecodeSearch feeds arbitrary bodies to POST /search/similar: only a
// non-empty, bounded vector of finite numbers and 1 ≤ n ≤ max-n reach the
// engine.
func FuzzDecodeSearch(f *testing.F) {
	for _, s := range []string{
		`{"features":[1,0,2]}`, `{"features":{"a":1},"n":5}`, `{"features":[],"n":1}`,
		`{"features":[1],"n":0}`, `{"features":[1],"n":1001}`, `{"features":[1],"n":-1}`,
		`{"features":[1],"n":1.5}`, `{"features":[1e400]}`, `{"features":{"":1}}`, `{"n":3}`,
		`{"features":null}`, `{"features":[1],"k":2}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		fs := &recorder{}
		serveFuzz(t, fs, jsonRequest(http.MethodPost, "/search/similar", body), http.StatusOK)
		for k, feats := range fs.searches {
			if len(feats) == 0 || len(feats) > api.MaxFeatures {
				t.Fatalf("%d features reached the engine", len(feats))
			}
			for name, v := range feats {
				if name == "" || len(name) > 256 || math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("feature %q=%v reached the engine", name, v)
				}
			}
			if n := fs.searchN[k]; n < 1 || n > DefaultLimits.MaxN {
				t.Fatalf("n=%d reached the engine", n)
			}
		}
	})
}

// FuzzDecodeAdminBodies feeds arbitrary bodies to POST /admin/retrain and
// POST /admin/evaluations: a job is submitted only with valid model names,
// protocol and folds.
func FuzzDecodeAdminBodies(f *testing.F) {
	for _, s := range []string{
		``, `{}`, `{"models":["knn","slim"]}`, `{"models":["knn"],"queue":true}`, `{"auto":true}`, `{"auto":"yes"}`, `{"models":[""]}`,
		`{"protocol":"novelty","folds":3,"seed":7}`, `{"protocol":"other"}`, `{"folds":11}`, `{"folds":-1}`,
		`{"seed":1.5}`, `{"models":"knn"}`, `null`, `{"queue":"yes"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		checkNames := func(models []string) {
			if len(models) > 32 {
				t.Fatalf("%d models submitted", len(models))
			}
			for _, m := range models {
				if m == "" || len(m) > 64 {
					t.Fatalf("model name %q submitted", m)
				}
			}
		}
		fs := &recorder{}
		serveFuzz(t, fs, jsonRequest(http.MethodPost, "/admin/retrain", body), http.StatusAccepted)
		for _, ms := range fs.trains {
			checkNames(ms)
		}
		fs = &recorder{}
		serveFuzz(t, fs, jsonRequest(http.MethodPost, "/admin/evaluations", body), http.StatusAccepted)
		for _, ev := range fs.evals {
			checkNames(ev.Models)
			if ev.Folds < 0 || ev.Folds > 10 {
				t.Fatalf("folds=%d submitted", ev.Folds)
			}
			if ev.Protocol != "" && ev.Protocol != "standard" && ev.Protocol != "novelty" {
				t.Fatalf("protocol %q submitted", ev.Protocol)
			}
		}
	})
}

// FuzzQueryParams sends an arbitrary raw query string to every route that
// reads query parameters: n, model, category, by, exclude_consumed,
// explain, limit, cursor, days, queue. A value that reaches a service is
// within its documented range; anything else is a 4xx naming the field.
func FuzzQueryParams(f *testing.F) {
	for _, s := range []string{
		"", "n=5", "n=0", "n=1001", "n=abc", "n=-1", "n=99999999999999999999", "n=%zz",
		"model=knn&category=rock&exclude_consumed=false&explain=true", "explain=maybe", "exclude_consumed=2",
		"by=content", "by=hybrid", "by=nope", "limit=1000", "limit=0", "cursor=abc", "cursor=" + strings.Repeat("x", 1025),
		"days=3650", "days=0", "queue=true", "queue=x", "auto=true", "auto=2", "model=" + strings.Repeat("m", 65), "n=5&n=abc", "a=1;b=2",
		"offset=10&n=10", "offset=-1", "offset=991&n=10", "offset=x", "exclude=a,b&exclude=c", "exclude=a%2Cb", "exclude=%00",
		"exclude=,,", "category=a&category=b", "category=" + strings.Repeat("c", 257), "exclude=%zz",
	} {
		f.Add(s)
	}
	routes := []struct {
		method, path string
		ok           int
	}{
		{http.MethodGet, "/users/u1/recommendations", http.StatusOK},
		{http.MethodGet, "/items/i1/similar", http.StatusOK},
		{http.MethodGet, "/items", http.StatusOK},
		{http.MethodGet, "/users", http.StatusOK},
		{http.MethodGet, "/users/u1/interactions", http.StatusOK},
		{http.MethodGet, "/admin/jobs", http.StatusOK},
		{http.MethodGet, "/stats", http.StatusOK},
		{http.MethodPost, "/admin/retrain", http.StatusAccepted},
	}
	f.Fuzz(func(t *testing.T, query string) {
		for _, rt := range routes {
			fs := &recorder{}
			req := httptest.NewRequest(http.MethodGet, "/", nil)
			req.Method = rt.method
			req.URL = &url.URL{Path: rt.path, RawQuery: query}
			req.RequestURI = ""
			serveFuzz(t, fs, req, rt.ok)
			for _, r := range fs.recs {
				if r.N < 1 || r.N > DefaultLimits.MaxN || len(r.Model) > 64 || r.UserID != "u1" ||
					r.Offset < 0 || r.Offset+r.N > DefaultLimits.MaxN || len(r.Categories) > 100 || len(r.Exclude) > api.MaxRequestItems {
					t.Fatalf("recommend request %+v from %q", r, query)
				}
				checkRecommendLists(t, r)
			}
			for _, r := range fs.similar {
				if r.N < 1 || r.N > DefaultLimits.MaxN || (r.By != "collaborative" && r.By != "content" && r.By != "hybrid") || len(r.Exclude) > api.MaxRequestItems {
					t.Fatalf("similar request %+v from %q", r, query)
				}
				checkRecommendLists(t, api.RecommendRequest{Exclude: r.Exclude})
			}
			for _, p := range fs.pages {
				if p.Limit < 1 || p.Limit > 1000 || len(p.Cursor) > 1024 {
					t.Fatalf("page %+v from %q", p, query)
				}
			}
			for _, l := range fs.jobLimits {
				if l < 1 || l > 1000 {
					t.Fatalf("job limit %d from %q", l, query)
				}
			}
			for _, d := range fs.days {
				if d < 1 || d > 3650 {
					t.Fatalf("days %d from %q", d, query)
				}
			}
		}
	})
}

// checkRecommendLists fails when a category or id list that reached the
// engine holds an empty or oversized category or an invalid id.
func checkRecommendLists(t *testing.T, r api.RecommendRequest) {
	t.Helper()
	for _, c := range r.Categories {
		if c == "" || len(c) > 256 {
			t.Fatalf("category %q reached the engine", c)
		}
	}
	for _, l := range [][]string{r.Exclude, r.History} {
		for _, id := range l {
			if api.ValidateID(id) != "" {
				t.Fatalf("id %q reached the engine", id)
			}
		}
	}
}

// FuzzDecodeRecommend feeds arbitrary bodies to POST /recommendations and
// POST /users/{id}/rerank: only 1–10,000 valid item ids, 1 ≤ n,
// 0 ≤ offset, offset + n ≤ max-n, valid categories and exclude ids reach
// the engine.
func FuzzDecodeRecommend(f *testing.F) {
	for _, s := range []string{
		`{"items":["a","b"]}`, `{"items":["a"],"n":5,"offset":5,"model":"itemknn","category":["x","y"],"exclude":["c"]}`,
		`{"items":["a"],"category":"x"}`, `{"items":[]}`, `{"items":[""]}`, `{"items":"a"}`, `{"items":["a"],"n":0}`,
		`{"items":["a"],"offset":-1}`, `{"items":["a"],"offset":995,"n":10}`, `{"items":["a"],"category":[""]}`,
		`{"items":["a"],"category":3}`, `{"items":["a"],"exclude":["\u0000"]}`, `{"items":["a"],"exclude_consumed":false,"explain":true}`,
		`{"items":["a"],"user":"u"}`, `{}`, `null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		fs := &recorder{}
		serveFuzz(t, fs, jsonRequest(http.MethodPost, "/recommendations", body), http.StatusOK)
		for _, r := range fs.recs {
			if r.N < 1 || r.Offset < 0 || r.Offset+r.N > DefaultLimits.MaxN || len(r.History) < 1 ||
				len(r.History) > api.MaxRequestItems || len(r.Exclude) > api.MaxRequestItems || len(r.Categories) > 100 || len(r.Model) > 64 {
				t.Fatalf("recommend request %+v from %q", r, body)
			}
			checkRecommendLists(t, r)
		}
		fs = &recorder{}
		serveFuzz(t, fs, jsonRequest(http.MethodPost, "/users/u1/rerank", body), http.StatusOK)
		for _, r := range fs.reranks {
			if len(r.Items) < 1 || len(r.Items) > api.MaxRequestItems || len(r.Model) > 64 || r.UserID != "u1" {
				t.Fatalf("rerank request %+v from %q", r, body)
			}
			checkRecommendLists(t, api.RecommendRequest{History: r.Items})
		}
	})
}
