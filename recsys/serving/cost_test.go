package serving

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/recsys"
	"github.com/recsys-engine/recsys/recsys/internal/synth"
	"github.com/recsys-engine/recsys/storage"
)

// clusteredStore is a store holding synth.Clustered's views of users × items
// (users u0.., items i0..), and its snapshot's matrix.
func clusteredStore(tb testing.TB, seed uint64, users, items, perUser int) (*storage.Store, *api.Snapshot, *recsys.Matrix) {
	tb.Helper()
	st := mustStore(tb)
	var evs []api.Interaction
	synth.Clustered(seed, users, items, perUser, func(u, i uint32) {
		evs = append(evs, api.Interaction{UserID: fmt.Sprint("u", u), ItemID: fmt.Sprint("i", i), Type: "view"})
	})
	if _, err := st.AddInteractions(context.Background(), evs); err != nil {
		tb.Fatal(err)
	}
	snap, err := st.Snapshot(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	return st, snap, fitMatrix(tb, st)
}

// servedFit fits the named model with p on x, ready to serve.
func servedFit(tb testing.TB, x *recsys.Matrix, name string, p recsys.Params) *Served {
	tb.Helper()
	m, err := recsys.New(name)
	if err != nil {
		tb.Fatal(err)
	}
	if err := m.Fit(context.Background(), x, p); err != nil {
		tb.Fatal(err)
	}
	return &Served{Info: api.ModelInfo{Name: name, Version: "v1"}, Model: m}
}

// The probe times the default number of requests for each model, and its
// figures are ordered: 0 < p50 ≤ p99, and the mean is positive.
func TestCostProbe_measure(t *testing.T) {
	_, snap, x := clusteredStore(t, 1, 300, 200, 12)
	probe := NewCostProbe(snap, x, CostOptions{Seed: 1})
	for _, name := range []string{"popular", "itemknn", "userknn"} {
		c, err := probe.Measure(context.Background(), servedFit(t, x, name, recsys.Params{K: 20}))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %+v", name, c)
		if c.Requests < DefaultCostRequests || c.MeanMS <= 0 || c.P50MS <= 0 || c.P50MS > c.P99MS {
			t.Errorf("%s: %+v, want %d requests timed and 0 < p50 ≤ p99, mean > 0", name, c, DefaultCostRequests)
		}
	}
}

// The CPU cap ends a model's timing early, and the figures say how many
// requests were timed.
func TestCostProbe_cap(t *testing.T) {
	_, snap, x := clusteredStore(t, 2, 100, 80, 8)
	probe := NewCostProbe(snap, x, CostOptions{Seed: 1, MaxCPU: 1})
	c, err := probe.Measure(context.Background(), servedFit(t, x, "itemknn", recsys.Params{K: 10}))
	if err != nil {
		t.Fatal(err)
	}
	if c.Requests < 1 || c.Requests >= DefaultCostRequests || c.P50MS > c.P99MS {
		t.Fatalf("capped at 1 ns of CPU: %+v, want fewer than %d requests timed", c, DefaultCostRequests)
	}
}

// The sample is fixed by the seed: distinct users, each with a positive
// pair, at most Requests of them, in an order the seed decides.
func TestCostProbe_sample(t *testing.T) {
	_, snap, x := clusteredStore(t, 3, 400, 100, 5)
	a := NewCostProbe(snap, x, CostOptions{Seed: 7, Requests: 50}).Users()
	b := NewCostProbe(snap, x, CostOptions{Seed: 7, Requests: 50}).Users()
	c := NewCostProbe(snap, x, CostOptions{Seed: 8, Requests: 50}).Users()
	if len(a) != 50 || !slices.Equal(a, b) {
		t.Fatalf("seed 7 drew %v then %v, want the same 50 users", a, b)
	}
	if slices.Equal(a, c) {
		t.Fatalf("seeds 7 and 8 drew the same users %v", a)
	}
	if len(slices.Compact(slices.Sorted(slices.Values(a)))) != len(a) {
		t.Fatalf("a user drawn twice: %v", a)
	}
	if all := NewCostProbe(snap, x, CostOptions{Seed: 7}).Users(); len(all) != 400 {
		t.Fatalf("%d users drawn of 400 with fewer users than requests, want all", len(all))
	}
}

// The probe's engine answers its users as the serving engine over the
// store does: the same lists from the same model, so what it times is
// what a request computes.
func TestCostProbe_servesAsTheStore(t *testing.T) {
	st, snap, x := clusteredStore(t, 4, 120, 60, 10)
	ctx := context.Background()
	probe := NewCostProbe(snap, x, CostOptions{Seed: 1, Requests: 30})
	for _, name := range []string{"popular", "itemknn"} {
		m := servedFit(t, x, name, recsys.Params{K: 10})
		if _, err := probe.Measure(ctx, m); err != nil {
			t.Fatal(err)
		}
		live := NewEngine(st, EngineOptions{})
		live.Install(m, true)
		for _, u := range probe.Users() {
			req := api.RecommendRequest{UserID: u, N: costN, Model: name, ExcludeConsumed: true}
			got, err := probe.eng.Recommend(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			want, err := live.Recommend(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			if got.Model != name || !slices.Equal(ids(got.Items), ids(want.Items)) {
				t.Fatalf("%s for %s: the probe answered %s %v, the store's engine %s %v", name, u, got.Model, ids(got.Items), want.Model, ids(want.Items))
			}
		}
	}
}

// A snapshot without a positive pair gives nothing to time.
func TestCostProbe_noUsers(t *testing.T) {
	x, err := recsys.NewMatrix(2, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	snap := &api.Snapshot{UserIDs: []string{"", "u1"}, ItemIDs: []string{"", "i1"}, Hidden: make([]bool, 2)}
	m := &Served{Info: api.ModelInfo{Name: "popular"}, Model: &recsys.Popular{}}
	if _, err := NewCostProbe(snap, x, CostOptions{}).Measure(context.Background(), m); err == nil {
		t.Fatal("measured a snapshot with no positive pair")
	}
}

// BenchmarkServingCost times one probe of a model (1,000 requests) on
// 2,000 users × 1,000 items, and reports its figures.
func BenchmarkServingCost(b *testing.B) {
	_, snap, x := clusteredStore(b, 1, 2000, 1000, 20)
	for _, name := range []string{"popular", "itemknn", "userknn"} {
		b.Run(name, func(b *testing.B) {
			m := servedFit(b, x, name, recsys.Params{K: 50})
			probe := NewCostProbe(snap, x, CostOptions{Seed: 1})
			var c api.ServingCost
			for b.Loop() {
				var err error
				if c, err = probe.Measure(context.Background(), m); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(c.MeanMS, "mean-ms/req")
			b.ReportMetric(c.P99MS, "p99-ms/req")
		})
	}
}

// BenchmarkServingCost_newProbe times building a probe: the user sample,
// its profiles and the catalogue of its engine.
func BenchmarkServingCost_newProbe(b *testing.B) {
	_, snap, x := clusteredStore(b, 1, 2000, 1000, 20)
	m := servedFit(b, x, "popular", recsys.Params{})
	for b.Loop() {
		probe := NewCostProbe(snap, x, CostOptions{Seed: 1, Requests: 1})
		if _, err := probe.Measure(context.Background(), m); err != nil {
			b.Fatal(err)
		}
	}
}
