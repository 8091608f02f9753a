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
	"github.com/recsys-engine/recsys/recsys/febr"
	"github.com/recsys-engine/recsys/storage"
)

// shapesModels are fitted on one store for the request-shape tests: the
// neighbourhood models (TopRanker and full scorers), FEBR, EASE, RP3β and
// matrix factorisation (fold-in of the live history).
var shapesModels = []string{"popular", "itemknn", "userknn", "kunn", "kunn-i", "kunn-u", "slim", "ease", "rp3beta", "bpr", "wrmf", "mfauc", febr.Name}

// shapesStore holds 120 users with skewed, ties-rich histories over 80
// items, every event positive, items in categories c0–c2 (i0–i79, category
// c{i%3}) and two hidden items.
func shapesStore(t *testing.T) *storage.Store {
	t.Helper()
	st := mustStore(t)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(11, 12))
	var evs []api.Interaction
	for u := range 120 {
		for range 3 + rng.IntN(15) {
			i := int(80 * rng.Float64() * rng.Float64())
			evs = append(evs, api.Interaction{UserID: fmt.Sprintf("u%d", u), ItemID: fmt.Sprintf("i%d", i), Type: "view"})
		}
	}
	if _, err := st.AddInteractions(ctx, evs); err != nil {
		t.Fatal(err)
	}
	var items []api.Item
	for i := range 80 {
		items = append(items, api.Item{ID: fmt.Sprintf("i%d", i), Categories: []string{fmt.Sprintf("c%d", i%3)}, Hidden: i == 5 || i == 17})
	}
	if err := st.PutItems(ctx, items); err != nil {
		t.Fatal(err)
	}
	return st
}

// shapesEngines fits every model of shapesModels on st, one engine each.
func shapesEngines(t *testing.T, st *storage.Store) map[string]*Engine {
	t.Helper()
	x := fitMatrix(t, st)
	out := map[string]*Engine{}
	for _, name := range shapesModels {
		m, err := recsys.New(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Fit(context.Background(), x, recsys.Params{K: 10, Extra: map[string]float64{"epochs": 5}}); err != nil {
			t.Fatalf("fit %s: %v", name, err)
		}
		eng := NewEngine(st, EngineOptions{PopularityTTL: time.Hour})
		eng.Install(&Served{Info: api.ModelInfo{Name: name, Version: "v1"}, Model: m}, true)
		out[name] = eng
	}
	return out
}

func mustRecommend(t *testing.T, eng *Engine, req api.RecommendRequest) *api.Recommendations {
	t.Helper()
	rec, err := eng.Recommend(context.Background(), req)
	if err != nil {
		t.Fatalf("%+v: %v", req, err)
	}
	return rec
}

func sameItems(a, b []api.ScoredItem) bool {
	return slices.EqualFunc(a, b, func(x, y api.ScoredItem) bool { return x.ItemID == y.ItemID && x.Score == y.Score && x.Cold == y.Cold })
}

// TestEngine_Recommend_pages: the page at offset 10 of n=10 is items 11–20
// of the list of n=20, ties included, for every model and for the
// popularity fallback; pages of 7 cover the list of 35 without overlap.
func TestEngine_Recommend_pages(t *testing.T) {
	st := shapesStore(t)
	for name, eng := range shapesEngines(t, st) {
		for _, user := range []string{"u0", "u1", "u7", "u42", "nobody"} {
			full := mustRecommend(t, eng, api.RecommendRequest{UserID: user, N: 20, ExcludeConsumed: true})
			page := mustRecommend(t, eng, api.RecommendRequest{UserID: user, N: 10, Offset: 10, ExcludeConsumed: true})
			if len(full.Items) != 20 || !sameItems(page.Items, full.Items[10:]) {
				t.Fatalf("%s %s: page 2 = %v, want items 11–20 of %v", name, user, ids(page.Items), ids(full.Items))
			}
			long := mustRecommend(t, eng, api.RecommendRequest{UserID: user, N: 35, ExcludeConsumed: true})
			var joined []api.ScoredItem
			for off := 0; off < 35; off += 7 {
				joined = append(joined, mustRecommend(t, eng, api.RecommendRequest{UserID: user, N: 7, Offset: off, ExcludeConsumed: true}).Items...)
			}
			if !sameItems(joined, long.Items) {
				t.Fatalf("%s %s: pages of 7 = %v, want %v", name, user, ids(joined), ids(long.Items))
			}
		}
	}
}

// TestEngine_Recommend_exclude: excluded items are absent, the list still
// has n items, and it is the list without exclusion with those items taken
// out; an unknown id in the list changes nothing.
func TestEngine_Recommend_exclude(t *testing.T) {
	st := shapesStore(t)
	for name, eng := range shapesEngines(t, st) {
		for _, user := range []string{"u3", "u9", "nobody"} {
			base := mustRecommend(t, eng, api.RecommendRequest{UserID: user, N: 30, ExcludeConsumed: true})
			ex := []string{base.Items[0].ItemID, base.Items[3].ItemID, base.Items[4].ItemID, "no-such-item"}
			got := mustRecommend(t, eng, api.RecommendRequest{UserID: user, N: 10, Exclude: ex, ExcludeConsumed: true})
			want := slices.DeleteFunc(slices.Clone(base.Items), func(it api.ScoredItem) bool { return slices.Contains(ex, it.ItemID) })[:10]
			if len(got.Items) != 10 || !sameItems(got.Items, want) {
				t.Fatalf("%s %s excluding %v: %v, want %v", name, user, ex, ids(got.Items), ids(want))
			}
		}
	}
}

// TestEngine_Recommend_categoriesAny: with categories c0 and c2 the list
// is the unfiltered ranking restricted to items of c0 or c2.
func TestEngine_Recommend_categoriesAny(t *testing.T) {
	st := shapesStore(t)
	for name, eng := range shapesEngines(t, st) {
		for _, user := range []string{"u2", "u11", "nobody"} {
			all := mustRecommend(t, eng, api.RecommendRequest{UserID: user, N: 1000, ExcludeConsumed: true})
			got := mustRecommend(t, eng, api.RecommendRequest{UserID: user, N: 12, Categories: []string{"c0", "c2"}, ExcludeConsumed: true})
			var want []api.ScoredItem
			for _, it := range all.Items {
				var i int
				fmt.Sscanf(it.ItemID, "i%d", &i)
				if i%3 != 1 && len(want) < 12 {
					want = append(want, it)
				}
			}
			if len(got.Items) != 12 || !sameItems(got.Items, want) {
				t.Fatalf("%s %s: categories c0|c2 = %v, want %v", name, user, ids(got.Items), ids(want))
			}
		}
	}
}

// TestEngine_Recommend_historyIsUser: recommendations for an anonymous
// history equal to a stored user's history are that user's, item for item
// and score for score, for every model, with and without consumed items;
// unknown ids in the history are reported and change nothing.
func TestEngine_Recommend_historyIsUser(t *testing.T) {
	st := shapesStore(t)
	ctx := context.Background()
	engines := shapesEngines(t, st)
	for u := range 40 {
		user := fmt.Sprintf("u%d", u)
		hist, _, err := st.History(ctx, user, api.Page{Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		var items []string
		for k := len(hist) - 1; k >= 0; k-- { // any order
			items = append(items, hist[k].ItemID)
		}
		items = append(items, "ghost", items[0], "ghost")
		for name, eng := range engines {
			for _, consumed := range []bool{true, false} {
				want := mustRecommend(t, eng, api.RecommendRequest{UserID: user, N: 15, ExcludeConsumed: consumed, Explain: true})
				got := mustRecommend(t, eng, api.RecommendRequest{History: items, N: 15, ExcludeConsumed: consumed, Explain: true})
				if !sameItems(got.Items, want.Items) || got.Model != want.Model || got.Fallback != want.Fallback {
					t.Fatalf("%s, history of %s: %v, want %v", name, user, got.Items, want.Items)
				}
				for k := range got.Items {
					if !slices.Equal(got.Items[k].Reasons, want.Items[k].Reasons) {
						t.Fatalf("%s, history of %s: reasons %v, want %v", name, user, got.Items[k].Reasons, want.Items[k].Reasons)
					}
				}
				if got.UserID != "" || !slices.Equal(got.UnknownItems, []string{"ghost"}) {
					t.Fatalf("%s: user %q, unknown %v, want none and [ghost]", name, got.UserID, got.UnknownItems)
				}
			}
		}
	}
	// A history of unknown items only is a cold user: popularity.
	rec := mustRecommend(t, engines["itemknn"], api.RecommendRequest{History: []string{"x", "y"}, N: 5, ExcludeConsumed: true})
	cold := mustRecommend(t, engines["itemknn"], api.RecommendRequest{UserID: "nobody", N: 5, ExcludeConsumed: true})
	if rec.Fallback != "popular" || !sameItems(rec.Items, cold.Items) || !slices.Equal(rec.UnknownItems, []string{"x", "y"}) {
		t.Fatalf("unknown history: %+v, want the popularity list %v", rec, ids(cold.Items))
	}
}

// TestEngine_Rerank_followsScores: a shuffled slice of a user's
// recommendation list comes back in the list's order with the list's
// scores, for every model; unknown, repeated and hidden candidates are
// handled as documented; a cold item goes last, flagged; a user without
// history gets popularity order.
func TestEngine_Rerank_followsScores(t *testing.T) {
	st := shapesStore(t)
	ctx := context.Background()
	if err := st.PutItems(ctx, []api.Item{{ID: "fresh1"}, {ID: "fresh2"}}); err != nil {
		t.Fatal(err)
	}
	cat, err := st.Catalogue(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Every event is a view: an item of popularity 0 has none, it is cold.
	cold := func(id string) bool { return cat.Popularity[cat.Index[id]] == 0 }
	rng := rand.New(rand.NewPCG(5, 6))
	for name, eng := range shapesEngines(t, st) {
		for _, user := range []string{"u0", "u5", "u33", "nobody"} {
			list := mustRecommend(t, eng, api.RecommendRequest{UserID: user, N: 40, ExcludeConsumed: false})
			var picked []api.ScoredItem
			for k, it := range list.Items {
				if k%3 != 1 {
					picked = append(picked, it)
				}
			}
			cand := ids(picked)
			rng.Shuffle(len(cand), func(a, b int) { cand[a], cand[b] = cand[b], cand[a] })
			cand = append([]string{"fresh2", "ghost", "i5"}, cand...)
			cand = append(cand, cand[4], "fresh1", "ghost", "i17")
			got, err := eng.Rerank(ctx, api.RerankRequest{UserID: user, Items: cand})
			if err != nil {
				t.Fatal(err)
			}
			// The warm candidates in the list's order with its scores, then
			// the cold ones in request order, unscored (matrix
			// factorisation gives them the score of untrained factors).
			want := slices.DeleteFunc(picked, func(it api.ScoredItem) bool { return cold(it.ItemID) })
			var coldSeen []string
			for _, id := range cand {
				if _, ok := cat.Index[id]; ok && cold(id) && !slices.Contains(coldSeen, id) {
					coldSeen = append(coldSeen, id)
					want = append(want, api.ScoredItem{ItemID: id, Cold: true})
				}
			}
			if len(coldSeen) < 2 {
				t.Fatalf("%s %s: only %v cold", name, user, coldSeen)
			}
			if !sameItems(got.Items, want) {
				t.Fatalf("%s %s: rerank = %v\nwant %v", name, user, got.Items, want)
			}
			if !slices.Equal(got.UnknownItems, []string{"ghost"}) || !slices.Equal(got.HiddenItems, []string{"i5", "i17"}) {
				t.Fatalf("%s %s: unknown %v hidden %v", name, user, got.UnknownItems, got.HiddenItems)
			}
			if got.Model != list.Model || got.Fallback != list.Fallback || got.UserID != user {
				t.Fatalf("%s %s: model %q fallback %q, want %q %q", name, user, got.Model, got.Fallback, list.Model, list.Fallback)
			}
		}
	}
}
