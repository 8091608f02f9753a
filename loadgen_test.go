package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/recsys-engine/recsys/api/client"
)

func TestPaceSchedule(t *testing.T) {
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	// 4 clients at 100 req/s in all: each sends every 40 ms, client w
	// offset by w·10 ms.
	for _, tc := range []struct {
		w, seq int
		want   time.Duration
	}{{0, 0, 0}, {1, 0, 10 * time.Millisecond}, {3, 0, 30 * time.Millisecond}, {0, 1, 40 * time.Millisecond}, {1, 2, 90 * time.Millisecond}} {
		if got := paceSchedule(start, 100, 4, tc.w, tc.seq).Sub(start); got != tc.want {
			t.Errorf("client %d request %d at %v, want %v", tc.w, tc.seq, got, tc.want)
		}
	}
}

func TestLatencySummary_percentiles(t *testing.T) {
	ls := make([]time.Duration, 1000)
	for k := range ls {
		ls[k] = time.Duration(1000-k) * time.Millisecond // 1000 ms … 1 ms, unsorted
	}
	got := latencySummary("x", ls, 3, 2*time.Second)
	want := BenchOpResult{Op: "x", Requests: 1000, Errors: 3, Throughput: 500, P50ms: 500, P90ms: 900, P99ms: 990, P999ms: 999, Maxms: 1000}
	if got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

// TestBench_pacedChargesStalls: a server that stalls on its first request
// holds back the requests scheduled during the stall; a paced run counts
// their latency from the scheduled time (no coordinated omission), sends
// every scheduled request, and asks only for the given users.
func TestBench_pacedChargesStalls(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	first := true
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		stall := first
		first = false
		seen = append(seen, strings.Split(r.URL.Path, "/")[2])
		mu.Unlock()
		if stall {
			time.Sleep(600 * time.Millisecond)
		}
		_, _ = io.WriteString(w, `{}`)
	}))
	defer srv.Close()
	users := []string{"alice", "bob", "carol"}
	c := benchConfig{Addr: strings.TrimPrefix(srv.URL, "http://"), Duration: time.Second, Concurrency: 1,
		Mix: map[benchOp]int{opRecommend: 1}, Batch: 1, Users: 1, N: 10, Seed: 1, Rate: 100, UserIDs: users}
	res, err := bench(context.Background(), c, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if res.Total.Requests != 100 || res.Unsent != 0 || res.Total.Errors != 0 {
		t.Fatalf("requests %d, unsent %d, errors %d; want the 100 scheduled requests, all sent and answered", res.Total.Requests, res.Unsent, res.Total.Errors)
	}
	// The requests scheduled at 0, 10, …, 400 ms (41 of 100) wait for the
	// stall to end at 600 ms or later, so at least 41 latencies are ≥ 200 ms
	// and the 90th percentile is among them. Timed from the actual send,
	// only the first would be.
	if res.Total.P90ms < 200 {
		t.Errorf("p90 %.1f ms, want ≥ 200 ms: latency must count from the scheduled send time", res.Total.P90ms)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, u := range seen {
		if !slices.Contains(users, u) {
			t.Fatalf("asked for user %q, not one of %v", u, users)
		}
	}
}

// A similar-items load asks for the items the server lists, with the
// --similar-by and n given.
func TestBench_similarBy(t *testing.T) {
	var mu sync.Mutex
	var asked []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/items" {
			_, _ = io.WriteString(w, `{"items":[{"id":"i1"},{"id":"i2"}]}`)
			return
		}
		mu.Lock()
		asked = append(asked, r.URL.Path+"?"+r.URL.RawQuery)
		mu.Unlock()
		_, _ = io.WriteString(w, `{}`)
	}))
	defer srv.Close()
	c := benchConfig{Addr: strings.TrimPrefix(srv.URL, "http://"), Duration: 200 * time.Millisecond, Concurrency: 1,
		Mix: map[benchOp]int{opSimilar: 1}, Batch: 1, Users: 1, N: 5, Seed: 1, Rate: 50, SimilarBy: "content"}
	if _, err := bench(context.Background(), c, io.Discard); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) == 0 {
		t.Fatal("no similar-items request")
	}
	for _, a := range asked {
		if a != "/items/i1/similar?by=content&n=5" && a != "/items/i2/similar?by=content&n=5" {
			t.Fatalf("asked %q, want /items/i1|i2/similar?by=content&n=5", a)
		}
	}
}

// --placement and --filter go with every recommendation request.
func TestBench_steering(t *testing.T) {
	var mu sync.Mutex
	var asked []url.Values
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, r.URL.Query())
		mu.Unlock()
		_, _ = io.WriteString(w, `{}`)
	}))
	defer srv.Close()
	c := benchConfig{Addr: strings.TrimPrefix(srv.URL, "http://"), Duration: 200 * time.Millisecond, Concurrency: 1,
		Mix: map[benchOp]int{opRecommend: 1}, Batch: 1, Users: 3, UserPrefix: "u", N: 5, Seed: 1, Rate: 50,
		Steering: client.SteeringOptions{Placement: "home", Filter: `"c1" in categories`}}
	if _, err := bench(context.Background(), c, io.Discard); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) == 0 {
		t.Fatal("no recommendation request")
	}
	for _, q := range asked {
		if q.Get("placement") != "home" || q.Get("filter") != `"c1" in categories` || q.Get("n") != "5" {
			t.Fatalf("asked %v, want placement=home, the filter and n=5", q)
		}
	}
}

// With --items-file, similar-items requests ask for the file's items and
// never list the server's.
func TestBench_itemsFile(t *testing.T) {
	var mu sync.Mutex
	asked := map[string]bool{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked[r.URL.Path] = true
		mu.Unlock()
		_, _ = io.WriteString(w, `{}`)
	}))
	defer srv.Close()
	c := benchConfig{Addr: strings.TrimPrefix(srv.URL, "http://"), Duration: 300 * time.Millisecond, Concurrency: 1,
		Mix: map[benchOp]int{opSimilar: 1}, Batch: 1, Users: 1, N: 5, Seed: 1, Rate: 200, ItemIDs: []string{"x1", "x2", "x3"}}
	if _, err := bench(context.Background(), c, io.Discard); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	want := map[string]bool{"/items/x1/similar": true, "/items/x2/similar": true, "/items/x3/similar": true}
	for p := range asked {
		if !want[p] {
			t.Fatalf("asked %q, want one of x1..x3's similar items", p)
		}
	}
	if len(asked) != 3 {
		t.Fatalf("asked %v, want each of x1..x3 in about 60 requests", asked)
	}
}
