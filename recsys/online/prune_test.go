package online_test

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/recsys/online"
	"github.com/recsys-engine/recsys/storage/storagetest"
)

// Run deletes the lists recorded longer than the retention ago (one Prune
// more than one transaction's worth), and counts them in
// recsys_online_lists_pruned_total; the newer lists can still be credited
// and the counters keep every list. With a negative retention nothing is
// deleted.
func TestService_prune(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	const old = 2_503 // above the 1,000 lists of one transaction
	imps := make([]api.Impression, 0, old+2)
	for k := range old + 2 {
		at := now.Add(-2*time.Hour + time.Duration(k)*time.Millisecond)
		if k >= old {
			at = now.Add(-30 * time.Minute)
		}
		imps = append(imps, api.Impression{ID: api.NewRecommendationID(at, "s", uint64(k)), UserID: "u1",
			Model: "itemknn", ModelVersion: "v1", Items: []string{"i1"}, At: at})
	}
	ctx := context.Background()
	credits := func(st api.OnlineStore, id string) int {
		t.Helper()
		got, err := st.Attribute(ctx, []api.Touch{{RecommendationID: id, UserID: "u1", ItemID: "i1", At: now}}, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		return len(got)
	}

	t.Run("negative retention keeps every list", func(t *testing.T) {
		st := storagetest.Open(t)
		if err := st.PutImpressions(ctx, imps); err != nil {
			t.Fatal(err)
		}
		s := online.New(st, online.Options{Retention: -1, Now: func() time.Time { return now }})
		if err := s.Prune(ctx); err != nil {
			t.Fatal(err)
		}
		if credits(st, imps[0].ID) != 1 {
			t.Fatal("the oldest list was deleted with a negative retention")
		}
	})

	t.Run("one call deletes every batch", func(t *testing.T) {
		st := storagetest.Open(t)
		if err := st.PutImpressions(ctx, imps); err != nil {
			t.Fatal(err)
		}
		reg := prometheus.NewRegistry()
		s := online.New(st, online.Options{Retention: time.Hour, Now: func() time.Time { return now }, Registry: reg})
		if err := s.Prune(ctx); err != nil || pruned(t, reg) != old {
			t.Fatalf("Prune: %v, %v lists pruned; want %d", err, pruned(t, reg), old)
		}
	})

	st := storagetest.Open(t)
	if err := st.PutImpressions(ctx, imps); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	s := online.New(st, online.Options{Retention: time.Hour, PruneEvery: 5 * time.Millisecond,
		Now: func() time.Time { return now }, Registry: reg})
	rctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { s.Run(rctx); close(done) }()
	for deadline := time.Now().Add(10 * time.Second); pruned(t, reg) < old; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%v lists pruned after 10 s, want %d", pruned(t, reg), old)
		}
	}
	stop()
	<-done
	if n := pruned(t, reg); n != old {
		t.Fatalf("recsys_online_lists_pruned_total = %v, want %d", n, old)
	}
	for _, k := range []int{0, old - 1} {
		if credits(st, imps[k].ID) != 0 {
			t.Errorf("list %d, past the retention, was credited", k)
		}
	}
	for _, k := range []int{old, old + 1} {
		if credits(st, imps[k].ID) != 1 {
			t.Errorf("list %d, within the retention, was not credited", k)
		}
	}
	counts, err := st.OnlineCounts(ctx, "2026-05-01", "2026-05-01")
	if err != nil || len(counts) != 1 || counts[0].Lists != old+2 {
		t.Fatalf("counters %+v, %v; want %d lists", counts, err, old+2)
	}
}

// pruned reads recsys_online_lists_pruned_total from reg.
func pruned(t *testing.T, reg *prometheus.Registry) float64 {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() == "recsys_online_lists_pruned_total" {
			return f.GetMetric()[0].GetCounter().GetValue()
		}
	}
	t.Fatal("recsys_online_lists_pruned_total not registered")
	return 0
}
