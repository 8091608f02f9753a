package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/recsys-engine/recsys/api"
)

// nanServices answer with scores JSON cannot carry, as a content metric
// gone non-finite did.
type nanServices struct{ recorder }

func (s *nanServices) SearchSimilar(context.Context, map[string]float64, int) (*api.SimilarItems, error) {
	return &api.SimilarItems{By: "content", Items: []api.ScoredItem{{ItemID: "a", Score: math.NaN()}}}, nil
}

func (s *nanServices) Similar(_ context.Context, req api.SimilarRequest) (*api.SimilarItems, error) {
	return &api.SimilarItems{ItemID: req.ItemID, By: req.By, Items: []api.ScoredItem{{ItemID: "b", Score: math.Inf(1)}}}, nil
}

// TestWriteJSON_unencodable checks that a response that cannot be encoded
// is a 500 with the error envelope and a request id, logged with that id
// and counted in recsys_internal_errors_total, never a 200 with an empty
// body.
func TestWriteJSON_unencodable(t *testing.T) {
	var logs bytes.Buffer
	s := &nanServices{}
	h := New(Deps{Interactions: s, Users: s, Items: s, Stats: s, Recommender: s,
		Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	for k, req := range []*http.Request{
		jsonRequest(http.MethodPost, "/search/similar", []byte(`{"features":{"a":1}}`)),
		httptest.NewRequest(http.MethodGet, "/items/i1/similar?by=content", nil),
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		var out api.ErrorOut
		if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
			t.Fatalf("%s %s: %d with a body that is not the envelope (%v): %q", req.Method, req.URL, rec.Code, err, rec.Body)
		}
		if rec.Code != http.StatusInternalServerError || out.Error.Code != api.CodeInternal ||
			out.Error.Message != "internal error" || out.Error.RequestID == "" {
			t.Fatalf("%s %s: %d %+v, want 500 internal with a request id", req.Method, req.URL, rec.Code, out.Error)
		}
		if !strings.Contains(logs.String(), `"request_id":"`+out.Error.RequestID+`"`) ||
			!strings.Contains(logs.String(), "unsupported value") {
			t.Fatalf("%s %s: no log line with request id %s and the encoding error: %s", req.Method, req.URL, out.Error.RequestID, logs.String())
		}
		rec = httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
		want := "recsys_internal_errors_total " + string(rune('1'+k)) + "\n"
		if !strings.Contains(rec.Body.String(), want) {
			t.Fatalf("/metrics does not show %q after %d failures:\n%s", strings.TrimSpace(want), k+1, rec.Body)
		}
	}
}
