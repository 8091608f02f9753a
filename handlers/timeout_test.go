package handlers

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/recsys-engine/recsys/api"
)

// slowServices take a minute unless the request's context ends first, as a
// store or engine call stuck behind a long lock or a huge scan would.
type slowServices struct{ recorder }

func (s *slowServices) wait(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(time.Minute):
		return nil
	}
}

func (s *slowServices) Recommend(ctx context.Context, _ api.RecommendRequest) (*api.Recommendations, error) {
	return nil, s.wait(ctx)
}

func (s *slowServices) AddInteractions(ctx context.Context, _ []api.Interaction) (int, error) {
	return 0, s.wait(ctx)
}

// TestRequestTimeout_answers503 checks that a request whose work outlasts
// --request-timeout is answered promptly with 503 and the "timeout" error
// envelope, for a read and for a write.
func TestRequestTimeout_answers503(t *testing.T) {
	const timeout = 200 * time.Millisecond
	s := &slowServices{}
	h := New(Deps{Interactions: s, Users: s, Items: s, Stats: s, Recommender: s,
		Limits: Limits{RequestTimeout: timeout}})
	for _, req := range []*http.Request{
		httptest.NewRequest(http.MethodGet, "/users/u1/recommendations", nil),
		jsonRequest(http.MethodPost, "/interactions", []byte(`{"user_id":"u","item_id":"i"}`)),
	} {
		rec := httptest.NewRecorder()
		start := time.Now()
		h.ServeHTTP(rec, req)
		took := time.Since(start)
		var out api.ErrorOut
		if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
			t.Fatalf("%s %s: %v: %s", req.Method, req.URL, err, rec.Body)
		}
		if rec.Code != http.StatusServiceUnavailable || out.Error.Code != api.CodeTimeout ||
			!strings.Contains(out.Error.Message, "request timeout") || out.Error.RequestID == "" {
			t.Errorf("%s %s: %d %+v, want 503 timeout", req.Method, req.URL, rec.Code, out.Error)
		}
		if took > timeout+2*time.Second {
			t.Errorf("%s %s answered after %v (timeout %v)", req.Method, req.URL, took, timeout)
		}
	}
}

// backlogServices refuse every write as the store does when its event
// log's backlog stays at its bound past the deadline.
type backlogServices struct{ recorder }

func (s *backlogServices) AddInteractions(context.Context, []api.Interaction) (int, error) {
	return 0, &api.Error{Code: api.CodeUnavailable, Message: "the event log holds 7 events not yet applied", RetryAfter: 3}
}

// TestRetryAfter_header: an error that says when to retry is answered
// with Retry-After beside its envelope; one that does not, without.
func TestRetryAfter_header(t *testing.T) {
	s := &backlogServices{}
	h := New(Deps{Interactions: s, Users: s, Items: s, Stats: s, Recommender: s})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, jsonRequest(http.MethodPost, "/interactions", []byte(`{"user_id":"u","item_id":"i"}`)))
	var out api.ErrorOut
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatalf("%v: %s", err, rec.Body)
	}
	if rec.Code != http.StatusServiceUnavailable || out.Error.Code != api.CodeUnavailable || rec.Header().Get("Retry-After") != "3" {
		t.Fatalf("%d %+v Retry-After %q, want 503 unavailable with Retry-After 3", rec.Code, out.Error, rec.Header().Get("Retry-After"))
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, jsonRequest(http.MethodPost, "/interactions", []byte(`{"user_id":""}`)))
	if rec.Code != http.StatusBadRequest || rec.Header().Get("Retry-After") != "" {
		t.Fatalf("invalid input: %d Retry-After %q, want 400 without one", rec.Code, rec.Header().Get("Retry-After"))
	}
}
