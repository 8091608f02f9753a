package serving

import (
	"context"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/recsys"
)

// TestEngine_decaysTheLiveHistory: a model fitted with a half-life weighs
// the live history by age at serving as it did in validation. Users p1–p3
// hold {a, b} and q1–q3 {c, d}, q4 only d, so cos(a, b) = 1 and cos(c, d)
// = 3/√12 ≈ 0.866. A user who took a ten days before c gets b first
// without decay (1 > 0.866) and d first with a one-day half-life
// (0.866 · 1 > 1 · 2^−10).
func TestEngine_decaysTheLiveHistory(t *testing.T) {
	st := mustStore(t)
	ctx := context.Background()
	for _, u := range []string{"p1", "p2", "p3"} {
		add(t, st, u, "view", "a", "b")
	}
	for _, u := range []string{"q1", "q2", "q3"} {
		add(t, st, u, "view", "c", "d")
	}
	add(t, st, "q4", "view", "d")
	plain := fitModel(t, st, "itemknn", recsys.Params{K: 5})
	decayed := fitModel(t, st, "itemknn", recsys.Params{K: 5, Extra: map[string]float64{recsys.HalfLifeKey: 1}})
	if !recsys.Decays(decayed) || recsys.Decays(plain) {
		t.Fatalf("Decays: %v with a half-life, %v without", recsys.Decays(decayed), recsys.Decays(plain))
	}

	day := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	if _, err := st.AddInteractions(ctx, []api.Interaction{
		{UserID: "fresh", ItemID: "a", Type: "view", Timestamp: day},
		{UserID: "fresh", ItemID: "c", Type: "view", Timestamp: day.AddDate(0, 0, 10)},
	}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		model recsys.Model
		want  []string
	}{{plain, []string{"b", "d"}}, {decayed, []string{"d", "b"}}} {
		eng := NewEngine(st, EngineOptions{PopularityTTL: time.Nanosecond})
		eng.Install(&Served{Info: api.ModelInfo{Name: "itemknn", Version: "v1"}, Model: tc.model}, true)
		rec, err := eng.Recommend(ctx, api.RecommendRequest{UserID: "fresh", N: 2, ExcludeConsumed: true})
		if err != nil {
			t.Fatal(err)
		}
		if got := ids(rec.Items); !slices.Equal(got, tc.want) {
			t.Errorf("half-life %v: %v, want %v", recsys.ParamsOf(tc.model)[recsys.HalfLifeKey], got, tc.want)
		}
		rr, err := eng.Rerank(ctx, api.RerankRequest{UserID: "fresh", Items: []string{"b", "d"}})
		if err != nil {
			t.Fatal(err)
		}
		if got := ids(rr.Items); !slices.Equal(got, tc.want) {
			t.Errorf("half-life %v: rerank of [b d] %v, want %v", recsys.ParamsOf(tc.model)[recsys.HalfLifeKey], got, tc.want)
		}
		// The decayed scores are those of recsys.ScoreDecayed: d at
		// 0.866 · 2^0 and b at 1 · 2^−10.
		if recsys.Decays(tc.model) && len(rec.Items) == 2 {
			if d, b := rec.Items[0].Score, rec.Items[1].Score; math.Abs(d-math.Sqrt(0.75)) > 1e-12 || math.Abs(b-1.0/1024) > 1e-12 {
				t.Errorf("decayed scores d %v, b %v, want √0.75 and 1/1024", d, b)
			}
		}
	}
}

// TestEngine_decaysTheLiveHistory_userModels: userknn, kunn-u and kunn with a
// half-life answer the live user from the decayed history, their scores
// those of recsys.ScoreDecayed on the stored profile and its days.
func TestEngine_decaysTheLiveHistory_userModels(t *testing.T) {
	st := mustStore(t)
	ctx := context.Background()
	for _, u := range []string{"p1", "p2", "p3"} {
		add(t, st, u, "view", "a", "b")
	}
	for _, u := range []string{"q1", "q2", "q3"} {
		add(t, st, u, "view", "c", "d")
	}
	add(t, st, "q4", "view", "c", "e")
	day := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	if _, err := st.AddInteractions(ctx, []api.Interaction{
		{UserID: "fresh", ItemID: "a", Type: "view", Timestamp: day},
		{UserID: "fresh", ItemID: "c", Type: "view", Timestamp: day.AddDate(0, 0, 3)},
	}); err != nil {
		t.Fatal(err)
	}
	prof, err := st.Profile(ctx, "fresh")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"userknn", "kunn-u", "kunn"} {
		m := fitModel(t, st, name, recsys.Params{K: 3, Extra: map[string]float64{recsys.HalfLifeKey: 2}})
		if !recsys.Decays(m) {
			t.Fatalf("%s with a half-life does not decay", name)
		}
		eng := NewEngine(st, EngineOptions{PopularityTTL: time.Nanosecond})
		eng.Install(&Served{Info: api.ModelInfo{Name: name, Version: "v1"}, Model: m}, true)
		rec, err := eng.Recommend(ctx, api.RecommendRequest{UserID: "fresh", N: 3, ExcludeConsumed: true})
		if err != nil {
			t.Fatal(err)
		}
		c, err := eng.catalogue(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := make([]float64, len(c.cat.ItemIDs))
		recsys.ScoreDecayed(m, -1, prof.Positive, prof.PositiveDays, want)
		undecayed := make([]float64, len(c.cat.ItemIDs))
		m.Score(prof.Positive, undecayed)
		if len(rec.Items) == 0 {
			t.Fatalf("%s: no items", name)
		}
		differs := false
		for _, it := range rec.Items {
			i := c.cat.Index[it.ItemID]
			if math.Abs(it.Score-want[i]) > 1e-12 {
				t.Errorf("%s: %s scored %v, want the decayed %v", name, it.ItemID, it.Score, want[i])
			}
			differs = differs || math.Abs(undecayed[i]-want[i]) > 1e-9
		}
		if !differs {
			t.Errorf("%s: the decayed scores equal the undecayed ones here; the test shows nothing", name)
		}
	}
}
