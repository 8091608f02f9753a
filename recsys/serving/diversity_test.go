package serving

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/recsys"
)

// shapesCategory is the category of item iN of shapesStore: c{N%3}.
func shapesCategory(id string) string {
	n, err := strconv.Atoi(strings.TrimPrefix(id, "i"))
	if err != nil {
		return ""
	}
	return fmt.Sprintf("c%d", n%3)
}

// capWalk is the category cap worked independently of Diversify: the
// items of list in order, each kept while its category has fewer than k.
func capWalk(list []api.ScoredItem, k, n int) []api.ScoredItem {
	count := map[string]int{}
	var out []api.ScoredItem
	for _, it := range list {
		if len(out) == n {
			break
		}
		c := shapesCategory(it.ItemID)
		if c != "" && count[c] >= k {
			continue
		}
		count[c]++
		out = append(out, it)
	}
	return out
}

func lambda(l float64) *float64 { return &l }

// TestEngine_Recommend_maxPerCategory: for every model and the
// popularity fallback, the capped list is the uncapped ranking walked
// with the cap; its pages are slices of it; excluded items are left out
// before the cap, so the list still fills.
func TestEngine_Recommend_maxPerCategory(t *testing.T) {
	st := shapesStore(t)
	for name, eng := range shapesEngines(t, st) {
		for _, user := range []string{"u0", "u7", "u42", "nobody"} {
			base := mustRecommend(t, eng, api.RecommendRequest{UserID: user, N: 80, ExcludeConsumed: true})
			div := api.Diversity{MaxPerCategory: 2}
			got := mustRecommend(t, eng, api.RecommendRequest{UserID: user, N: 6, ExcludeConsumed: true, Diversity: div})
			want := capWalk(base.Items, 2, 6)
			if len(got.Items) != 6 || !sameItems(got.Items, want) {
				t.Fatalf("%s %s: capped = %v, want %v", name, user, ids(got.Items), ids(want))
			}
			page := mustRecommend(t, eng, api.RecommendRequest{UserID: user, N: 3, Offset: 3, ExcludeConsumed: true, Diversity: div})
			if !sameItems(page.Items, want[3:]) {
				t.Fatalf("%s %s: page 2 = %v, want %v", name, user, ids(page.Items), ids(want[3:]))
			}
			// Three categories, two each: a list of 10 has only 6.
			if got := mustRecommend(t, eng, api.RecommendRequest{UserID: user, N: 10, ExcludeConsumed: true, Diversity: div}); !sameItems(got.Items, want) {
				t.Fatalf("%s %s: n=10 capped = %v, want the 6 of %v", name, user, ids(got.Items), ids(want))
			}
			ex := []string{want[0].ItemID, want[4].ItemID}
			got = mustRecommend(t, eng, api.RecommendRequest{UserID: user, N: 6, ExcludeConsumed: true, Exclude: ex, Diversity: div})
			rest := slices.DeleteFunc(slices.Clone(base.Items), func(it api.ScoredItem) bool { return slices.Contains(ex, it.ItemID) })
			if want := capWalk(rest, 2, 6); len(got.Items) != 6 || !sameItems(got.Items, want) {
				t.Fatalf("%s %s excluding %v: %v, want %v", name, user, ex, ids(got.Items), ids(want))
			}
		}
	}
}

// meanSimilarity is the mean pairwise similarity of a list under the
// item neighbour lists of nb, from the catalogue's indices.
func meanSimilarity(t *testing.T, eng *Engine, nb recsys.ItemNeighbourhood, list []api.ScoredItem) float64 {
	t.Helper()
	c, err := eng.catalogue(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	pool := make([]Candidate, len(list))
	for k, it := range list {
		pool[k] = Candidate{Item: c.cat.Index[it.ItemID]}
	}
	sim := neighbourSimilarity(nb, len(c.cat.ItemIDs))(pool)
	s, pairs := 0.0, 0
	for a := range pool {
		for b := range a {
			s += sim(a, b)
			pairs++
		}
	}
	return s / float64(pairs)
}

// TestEngine_Recommend_mmr: λ = 1 is the model's order; a small λ lowers
// the mean similarity of the list (under the model's own neighbour
// lists) and keeps the model's first item first; pages are slices of one
// list; a model without neighbour lists, with none served beside it,
// keeps its order.
func TestEngine_Recommend_mmr(t *testing.T) {
	st := shapesStore(t)
	engines := shapesEngines(t, st)
	for _, name := range []string{"itemknn", "kunn", "slim", "bpr", "popular"} {
		eng := engines[name]
		for _, user := range []string{"u0", "u7", "u42"} {
			base := mustRecommend(t, eng, api.RecommendRequest{UserID: user, N: 10, ExcludeConsumed: true})
			one := mustRecommend(t, eng, api.RecommendRequest{UserID: user, N: 10, ExcludeConsumed: true, Diversity: api.Diversity{Lambda: lambda(1)}})
			if !sameItems(one.Items, base.Items) {
				t.Fatalf("%s %s: λ=1 %v, want the model's %v", name, user, ids(one.Items), ids(base.Items))
			}
			div := api.Diversity{Lambda: lambda(0.3)}
			got := mustRecommend(t, eng, api.RecommendRequest{UserID: user, N: 10, ExcludeConsumed: true, Diversity: div})
			page := mustRecommend(t, eng, api.RecommendRequest{UserID: user, N: 4, Offset: 6, ExcludeConsumed: true, Diversity: div})
			if len(got.Items) != 10 || !sameItems(page.Items, got.Items[6:]) {
				t.Fatalf("%s %s: page %v, want the last 4 of %v", name, user, ids(page.Items), ids(got.Items))
			}
			if !sameItems(got.Items[:1], base.Items[:1]) {
				t.Fatalf("%s %s: first %v, want the model's first %v", name, user, got.Items[0], base.Items[0])
			}
			nb, ok := eng.Active().Model.(recsys.ItemNeighbourhood)
			if !ok {
				if !sameItems(got.Items, base.Items) {
					t.Fatalf("%s %s: no similarity, yet %v is not the model's %v", name, user, ids(got.Items), ids(base.Items))
				}
				continue
			}
			if sb, sg := meanSimilarity(t, eng, nb, base.Items), meanSimilarity(t, eng, nb, got.Items); !(sg < sb) {
				t.Fatalf("%s %s: mean similarity %.4f with λ=0.3, %.4f without: %v vs %v", name, user, sg, sb, ids(got.Items), ids(base.Items))
			}
		}
	}
}

// TestEngine_Similar_maxPerCategory: similar items under a cap are the
// uncapped similar items walked with the cap, excluded ones left out.
func TestEngine_Similar_maxPerCategory(t *testing.T) {
	st := shapesStore(t)
	eng := shapesEngines(t, st)["itemknn"]
	ctx := context.Background()
	for _, item := range []string{"i0", "i3", "i10"} {
		base, err := eng.Similar(ctx, api.SimilarRequest{ItemID: item, N: 80, By: "collaborative"})
		if err != nil {
			t.Fatal(err)
		}
		got, err := eng.Similar(ctx, api.SimilarRequest{ItemID: item, N: 3, By: "collaborative", Diversity: api.Diversity{MaxPerCategory: 1}})
		if err != nil {
			t.Fatal(err)
		}
		if want := capWalk(base.Items, 1, 3); len(got.Items) != 3 || !sameItems(got.Items, want) || got.Model != "itemknn" {
			t.Fatalf("%s: %v from %s, want %v", item, ids(got.Items), got.Model, ids(want))
		}
		ex := []string{got.Items[0].ItemID}
		got, err = eng.Similar(ctx, api.SimilarRequest{ItemID: item, N: 3, By: "collaborative", Exclude: ex, Diversity: api.Diversity{MaxPerCategory: 1}})
		if err != nil {
			t.Fatal(err)
		}
		rest := slices.DeleteFunc(slices.Clone(base.Items), func(it api.ScoredItem) bool { return it.ItemID == ex[0] })
		if want := capWalk(rest, 1, 3); !sameItems(got.Items, want) {
			t.Fatalf("%s excluding %v: %v, want %v", item, ex, ids(got.Items), ids(want))
		}
	}
}

// TestEngine_Rerank_maxPerCategory: the rerank of candidates under a cap
// is the uncapped rerank walked with the cap, cold items included: warm
// candidates of c0 and c1, a cold one of c2 that has room and a cold one
// of c0 that has none.
func TestEngine_Rerank_maxPerCategory(t *testing.T) {
	st := shapesStore(t)
	ctx := context.Background()
	if err := st.PutItems(ctx, []api.Item{{ID: "i80", Categories: []string{"c2"}}, {ID: "i81", Categories: []string{"c0"}}}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"itemknn", "ease", "popular"} {
		eng := shapesEngines(t, st)[name]
		for _, user := range []string{"u0", "nobody"} {
			cand := []string{"i81", "i80"}
			for i := range 30 {
				if i%3 != 2 {
					cand = append(cand, fmt.Sprintf("i%d", i))
				}
			}
			base, err := eng.Rerank(ctx, api.RerankRequest{UserID: user, Items: cand})
			if err != nil {
				t.Fatal(err)
			}
			got, err := eng.Rerank(ctx, api.RerankRequest{UserID: user, Items: cand, Diversity: api.Diversity{MaxPerCategory: 3}})
			if err != nil {
				t.Fatal(err)
			}
			if want := capWalk(base.Items, 3, len(base.Items)); len(want) != 7 || !got.Items[6].Cold || !sameItems(got.Items, want) {
				t.Fatalf("%s %s: %v, want %v", name, user, ids(got.Items), ids(want))
			}
			one, err := eng.Rerank(ctx, api.RerankRequest{UserID: user, Items: cand, Diversity: api.Diversity{Lambda: lambda(1)}})
			if err != nil {
				t.Fatal(err)
			}
			if !sameItems(one.Items, base.Items) {
				t.Fatalf("%s %s: λ=1 rerank %v, want %v", name, user, ids(one.Items), ids(base.Items))
			}
		}
	}
}

// TestEngine_Recommend_maxPerCategoryCold: a cold item takes a slot only
// when its category has room among the warm items. coldFixture ranks
// w1..w5 and lets "near" displace w5; with w1 and w2 in category a and a
// cap of 2, near in a has no room, near in b has.
func TestEngine_Recommend_maxPerCategoryCold(t *testing.T) {
	for _, tc := range []struct {
		nearCategory string
		want         []string
	}{
		{"a", []string{"w1", "w2", "w3", "w4", "w5"}},
		{"b", []string{"w1", "w2", "w3", "w4", "near"}},
	} {
		eng, _ := coldFixture(t, EngineOptions{})
		put := eng.src.(interface {
			PutItems(context.Context, []api.Item) error
		}).PutItems
		cats := map[string]string{"w1": "a", "w2": "a", "near": tc.nearCategory}
		var its []api.Item
		for k := range 8 {
			id := fmt.Sprintf("w%d", k)
			its = append(its, api.Item{ID: id, Features: map[string]float64{"x": float64(k), "y": 0}, Categories: []string{cats[id]}})
		}
		its = append(its, api.Item{ID: "near", Features: map[string]float64{"x": 0.5, "y": 0}, Categories: []string{tc.nearCategory}})
		for k := range its {
			its[k].Categories = slices.DeleteFunc(its[k].Categories, func(c string) bool { return c == "" })
		}
		if err := put(context.Background(), its); err != nil {
			t.Fatal(err)
		}
		rec, err := eng.Recommend(context.Background(), api.RecommendRequest{UserID: "me", N: 5, ExcludeConsumed: true, Diversity: api.Diversity{MaxPerCategory: 2}})
		if err != nil {
			t.Fatal(err)
		}
		if got := ids(rec.Items); !slices.Equal(got, tc.want) {
			t.Errorf("near in %s: %v, want %v", tc.nearCategory, got, tc.want)
		}
	}
}
