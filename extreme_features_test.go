package main

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/recsys-engine/recsys/api"
)

// TestContent_extremeFeatures stores items whose features are the extremes
// of float64 next to an ordinary catalogue, retrains the content metric, and
// asks every by=content and query-by-example question: each answer is a 200
// with a valid JSON body whose scores are finite (before: a 200 with an
// empty body, as the encoder failed on a NaN score after the status went
// out).
func TestContent_extremeFeatures(t *testing.T) {
	a := startApp(t, nil)
	if status, body := a.do(t, http.MethodPost, "/interactions", "application/json", []byte(contractEvents(60, 30, 8))); status != http.StatusCreated {
		t.Fatalf("events: %d %s", status, body)
	}
	var items []string
	for i := range 27 {
		items = append(items, fmt.Sprintf(`{"id":"i%d","features":{"a":%d,"b":%d,"c":%g}}`, i, i%3, (i+1)%3, float64(i)/30))
	}
	items = append(items, `{"id":"i27","features":{"a":-1.7976931348623157e308,"b":1.7976931348623157e308,"c":5e-324}}`,
		`{"id":"i28","features":{"a":1e308,"b":-1e308}}`, `{"id":"i29","features":{"a":1e308,"b":-1e308}}`)
	if status, body := a.do(t, http.MethodPost, "/items", "application/json", []byte(`{"items":[`+strings.Join(items, ",")+`]}`)); status != http.StatusCreated {
		t.Fatalf("items: %d %s", status, body)
	}
	id := a.retrain(t, "itemknn", "content")
	j := waitJob(t, a.getter(t), id, time.Minute, api.Job.Done)
	if j.State != api.JobSucceeded || !strings.Contains(strings.Join(j.Versions, ","), "content@") {
		t.Fatalf("training: %+v, want an itemknn and a content version", j)
	}
	check := func(t *testing.T, status int, body []byte) []api.ScoredItem {
		t.Helper()
		if status != http.StatusOK {
			t.Fatalf("status %d, want 200; body %s", status, body)
		}
		var out struct {
			Items []api.ScoredItem `json:"items"`
		}
		if err := json.Unmarshal(body, &out); err != nil {
			t.Fatalf("body %q is not valid JSON: %v", body, err)
		}
		if len(out.Items) == 0 {
			t.Fatalf("no items in %s", body)
		}
		for _, it := range out.Items {
			if math.IsNaN(it.Score) || math.IsInf(it.Score, 0) {
				t.Fatalf("score %v in %s", it.Score, body)
			}
		}
		return out.Items
	}
	for i := range 30 {
		t.Run(fmt.Sprintf("similar i%d", i), func(t *testing.T) {
			status, body := a.do(t, http.MethodGet, fmt.Sprintf("/items/i%d/similar?by=content&n=5", i), "", nil)
			got := check(t, status, body)
			// The two equal extreme items are each other's nearest.
			if twin := map[int]string{28: "i29", 29: "i28"}[i]; twin != "" && (got[0].ItemID != twin || got[0].Score != 1) {
				t.Fatalf("nearest to i%d is %+v, want %s at distance 0", i, got[0], twin)
			}
		})
	}
	for _, q := range []string{`{"features":{"a":1,"b":2}}`, `{"features":{"a":1e308,"b":-1e308}}`,
		`{"features":{"a":-1.7976931348623157e308,"c":1.7976931348623157e308}}`, `{"features":{"c":5e-324}}`} {
		t.Run("search "+q, func(t *testing.T) {
			status, body := a.do(t, http.MethodPost, "/search/similar", "application/json", []byte(q))
			got := check(t, status, body)
			if strings.Contains(q, `"a":1e308,"b":-1e308`) && (got[0].Score != 1 || got[1].Score != 1) {
				t.Fatalf("search %s: %+v, want i28 and i29 first at distance 0", q, got)
			}
		})
	}
}
