package serving

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/recsys"
)

// scoreOnly hides a model's RankTop, so the engine scores every item.
type scoreOnly struct{ recsys.Model }

// TestEngine_rankTopSameAnswers: the item-based models answer through
// RankTop (most of the catalogue skipped) with the same items and scores
// as through Score over every item, for every user, with and without
// consumed items, with a category, past hidden and deleted items, and for
// a user whose last events came after the training.
func TestEngine_rankTopSameAnswers(t *testing.T) {
	st := mustStore(t)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(3, 4))
	var evs []api.Interaction
	for u := 0; u < 300; u++ {
		for range 5 + rng.IntN(40) {
			i := int(150 * rng.Float64() * rng.Float64()) // skewed popularity
			evs = append(evs, api.Interaction{UserID: fmt.Sprintf("u%d", u), ItemID: fmt.Sprintf("i%d", i), Type: "view"})
		}
	}
	if _, err := st.AddInteractions(ctx, evs); err != nil {
		t.Fatal(err)
	}
	var items []api.Item
	for i := 0; i < 150; i += 3 {
		items = append(items, api.Item{ID: fmt.Sprintf("i%d", i), Categories: []string{"x"}, Hidden: i%9 == 0})
	}
	if err := st.PutItems(ctx, items); err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteItem(ctx, "i4"); err != nil {
		t.Fatal(err)
	}
	x := fitMatrix(t, st)
	for _, name := range []string{"itemknn", "kunn-i", "slim"} {
		m, _ := recsys.New(name)
		if err := m.Fit(ctx, x, recsys.Params{K: 30}); err != nil {
			t.Fatal(err)
		}
		if _, ok := m.(recsys.TopRanker); !ok {
			t.Fatalf("%s is not a TopRanker", name)
		}
		ranked := NewEngine(st, EngineOptions{PopularityTTL: time.Hour})
		ranked.Install(&Served{Info: api.ModelInfo{Name: name, Version: "v1"}, Model: m}, true)
		full := NewEngine(st, EngineOptions{PopularityTTL: time.Hour})
		full.Install(&Served{Info: api.ModelInfo{Name: name, Version: "v1"}, Model: scoreOnly{m}}, true)
		add(t, st, "u1", "view", "i149", "i148") // after the training
		add(t, st, "u2", "dislike", "i0")
		for u := 0; u < 300; u++ {
			for _, req := range []api.RecommendRequest{
				{N: 10, ExcludeConsumed: true},
				{N: 50, ExcludeConsumed: false},
				{N: 7, ExcludeConsumed: true, Categories: []string{"x"}},
				{N: 1000, ExcludeConsumed: true},
			} {
				req.UserID = fmt.Sprintf("u%d", u)
				got, err := ranked.Recommend(ctx, req)
				if err != nil {
					t.Fatal(err)
				}
				want, err := full.Recommend(ctx, req)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.EqualFunc(got.Items, want.Items, func(a, b api.ScoredItem) bool { return a.ItemID == b.ItemID && a.Score == b.Score }) {
					t.Fatalf("%s, %+v: %v, want %v", name, req, got.Items, want.Items)
				}
			}
		}
	}
}
