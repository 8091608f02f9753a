package handlers

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/recsys-engine/recsys/api"
)

// countingStats answers Counts with a count that moves at every read, as a
// store under ingest does, and counts the reads.
type countingStats struct {
	recorder
	reads int
	fail  bool
}

func (s *countingStats) Counts(context.Context) (api.Counts, error) {
	s.reads++
	if s.fail {
		return api.Counts{}, errors.New("store closed")
	}
	n := int64(s.reads)
	return api.Counts{Users: 10 * n, Items: 20 * n, Interactions: 30 * n, Events: 40 * n}, nil
}

// TestMetrics_countsOneRead: a scrape reads the store's counts once, so the
// four gauges come from one moment (they would show reads 1-4 if each
// gauge read its own); a failed read shows -1 for each.
func TestMetrics_countsOneRead(t *testing.T) {
	s := &countingStats{}
	h := New(Deps{Interactions: s, Users: s, Items: s, Stats: s, Recommender: s})
	scrape := func() string {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
		if rec.Code != http.StatusOK {
			t.Fatalf("GET /metrics = %d", rec.Code)
		}
		return rec.Body.String()
	}
	for scrapes := 1; scrapes <= 2; scrapes++ {
		body := scrape()
		if s.reads != scrapes {
			t.Fatalf("%d scrapes read the counts %d times, want once each", scrapes, s.reads)
		}
		n := scrapes
		for _, want := range []string{
			"recsys_stored_users " + strconv.Itoa(10*n), "recsys_stored_items " + strconv.Itoa(20*n),
			"recsys_stored_interactions " + strconv.Itoa(30*n), "recsys_stored_events " + strconv.Itoa(40*n),
		} {
			if !strings.Contains(body, want+"\n") {
				t.Fatalf("scrape %d lacks %q:\n%s", scrapes, want, body)
			}
		}
	}
	s.fail = true
	body := scrape()
	for _, name := range []string{"users", "items", "interactions", "events"} {
		if want := "recsys_stored_" + name + " -1\n"; !strings.Contains(body, want) {
			t.Fatalf("a failed read: lacks %q:\n%s", want, body)
		}
	}
}
