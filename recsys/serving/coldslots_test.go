package serving

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/recsys/content"
	"github.com/recsys-engine/recsys/retrieval"
)

// coldFixture is a catalogue on two features where the distance to the
// history is known by construction: warm items w0..w7 at (k, 0), all
// viewed together by six users; "me" viewed w0 only, so itemknn ranks
// w1..w7 (equal scores, popularity then index order) and each wk lies
// k² from the history. "flop" sits on w0 but three users disliked it (events,
// no positive); "near" (0.5, 0) and "far" (50, 50) have no events.
func coldFixture(t *testing.T, opts EngineOptions) (*Engine, func(hidden ...string)) {
	t.Helper()
	st := mustStore(t)
	ctx := context.Background()
	var items []api.Item
	for k := 0; k < 8; k++ {
		items = append(items, api.Item{ID: fmt.Sprintf("w%d", k), Features: map[string]float64{"x": float64(k), "y": 0}})
	}
	items = append(items,
		api.Item{ID: "flop", Features: map[string]float64{"x": 0, "y": 0}},
		api.Item{ID: "near", Features: map[string]float64{"x": 0.5, "y": 0}},
		api.Item{ID: "far", Features: map[string]float64{"x": 50, "y": 50}})
	if err := st.PutItems(ctx, items); err != nil {
		t.Fatal(err)
	}
	for u := 0; u < 6; u++ {
		add(t, st, fmt.Sprintf("p%d", u), "view", "w0", "w1", "w2", "w3", "w4", "w5", "w6", "w7")
	}
	for u := 0; u < 3; u++ {
		add(t, st, fmt.Sprintf("q%d", u), "dislike", "flop")
	}
	add(t, st, "me", "view", "w0")
	m := fitItemKNN(t, st, 10)
	opts.PopularityTTL = time.Nanosecond
	eng := NewEngine(st, opts)
	eng.Install(&Served{Info: api.ModelInfo{Name: "itemknn", Version: "v1"}, Model: m}, true)
	eng.Install(&Served{Info: api.ModelInfo{Name: content.Name, Version: "c1"}, Model: content.NewContent([]string{"x", "y"},
		retrieval.Euclidean([]float64{0, 0}, []float64{1, 1}))}, false)
	hide := func(ids ...string) {
		t.Helper()
		var its []api.Item
		for _, it := range items {
			if slices.Contains(ids, it.ID) {
				it.Hidden = true
				its = append(its, it)
			}
		}
		if err := st.PutItems(ctx, its); err != nil {
			t.Fatal(err)
		}
	}
	return eng, hide
}

func recommend(t *testing.T, eng *Engine, n int, explain bool) []api.ScoredItem {
	t.Helper()
	rec, err := eng.Recommend(context.Background(), api.RecommendRequest{UserID: "me", N: n, ExcludeConsumed: true, Explain: explain})
	if err != nil {
		t.Fatal(err)
	}
	if rec.Model != "itemknn" {
		t.Fatalf("answered by %q, want itemknn", rec.Model)
	}
	return rec.Items
}

// TestEngine_coldSlots: a cold slot goes only to an item with no events at
// all, and only when it is at least as close in content to the user's
// history as the warm item it pushes out; it carries its own content score
// and a reason only with explain=true; --cold-slots-per-10 bounds how many.
func TestEngine_coldSlots(t *testing.T) {
	t.Run("known-unpopular is not cold, a near cold item earns the slot", func(t *testing.T) {
		eng, _ := coldFixture(t, EngineOptions{})
		got := recommend(t, eng, 5, false)
		// flop is nearer (d = 0) than near, but it has events: never cold.
		if want := []string{"w1", "w2", "w3", "w4", "near"}; !slices.Equal(ids(got), want) {
			t.Fatalf("n=5: %v, want %v", ids(got), want)
		}
		last := got[4]
		if want := 1 / (1 + 0.25); last.Score != want || !last.Cold {
			t.Errorf("near: score %v cold %v, want its own content similarity %v, flagged cold", last.Score, last.Cold, want)
		}
		if last.Score == got[3].Score {
			t.Errorf("near copies the score %v of the item before it", got[3].Score)
		}
		for _, it := range got {
			if len(it.Reasons) != 0 {
				t.Errorf("%s has reasons %+v without explain", it.ItemID, it.Reasons)
			}
			if it.Cold != (it.ItemID == "near") {
				t.Errorf("%s: cold = %v", it.ItemID, it.Cold)
			}
		}
		got = recommend(t, eng, 5, true)
		if r := got[4].Reasons; len(r) != 1 || r[0].Kind != "item" || r[0].ID != "w0" || r[0].Weight != got[4].Score {
			t.Errorf("near with explain: reasons %+v, want the history item w0 with weight %v", r, got[4].Score)
		}
	})
	t.Run("a far cold item does not earn the slot", func(t *testing.T) {
		eng, hide := coldFixture(t, EngineOptions{})
		hide("near") // far (d = 5000) against w5 (d = 25)
		got := recommend(t, eng, 5, false)
		if want := []string{"w1", "w2", "w3", "w4", "w5"}; !slices.Equal(ids(got), want) {
			t.Fatalf("n=5: %v, want %v (the model's own list)", ids(got), want)
		}
		// itemknn pads a short list with zero scores, far among them: it
		// is not offered a second time as a cold item.
		got = recommend(t, eng, 10, false)
		if want := []string{"w1", "w2", "w3", "w4", "w5", "w6", "w7", "flop", "far"}; !slices.Equal(ids(got), want) || got[8].Cold {
			t.Fatalf("n=10: %v (far cold: %v), want %v, far not as a cold item", ids(got), got[8].Cold, want)
		}
	})
	t.Run("the number of cold slots is bounded by ColdSlotsPer10", func(t *testing.T) {
		for _, tc := range []struct {
			per10, n int
			want     []string
		}{
			{-1, 5, []string{"w1", "w2", "w3", "w4", "w5"}},  // off
			{0, 5, []string{"w1", "w2", "w3", "w4", "near"}}, // the default: 1
			{1, 6, []string{"w1", "w2", "w3", "w4", "w5", "near"}},
			// Two slots: near beats w5 (d 0.25 ≤ 25); far (5000) does
			// not beat w4 (16), so only one is taken.
			{4, 6, []string{"w1", "w2", "w3", "w4", "w5", "near"}},
		} {
			eng, _ := coldFixture(t, EngineOptions{ColdSlotsPer10: tc.per10})
			if got := recommend(t, eng, tc.n, false); !slices.Equal(ids(got), tc.want) {
				t.Errorf("per10=%d n=%d: %v, want %v", tc.per10, tc.n, ids(got), tc.want)
			}
		}
		// Two cold items that both earn: a second near one.
		eng, _ := coldFixture(t, EngineOptions{ColdSlotsPer10: 4})
		for _, per10 := range []int{1, 4} {
			eng.opts.ColdSlotsPer10 = per10
			if err := eng.src.(interface {
				PutItems(context.Context, []api.Item) error
			}).PutItems(context.Background(), []api.Item{{ID: "near2", Features: map[string]float64{"x": 0, "y": 1.5}}}); err != nil {
				t.Fatal(err)
			}
			got := recommend(t, eng, 6, false)
			want := []string{"w1", "w2", "w3", "w4", "w5", "near"}
			if per10 == 4 {
				// near2 (2.25) beats w4 (16): two slots of 6·4/10 = 2.
				want = []string{"w1", "w2", "w3", "w4", "near", "near2"}
			}
			if !slices.Equal(ids(got), want) {
				t.Errorf("per10=%d with near2: %v, want %v", per10, ids(got), want)
			}
		}
	})
}

// With more cold items than maxColdItems, only the newest are offered:
// with a bound of 1, near2, added after near, takes the one slot that
// near (d = 0.25, nearer than near2's 2.25) takes without the bound.
func TestEngine_coldSlots_newestOnly(t *testing.T) {
	defer func(n int) { maxColdItems = n }(maxColdItems)
	for _, bound := range []int{4096, 1} {
		maxColdItems = bound
		eng, _ := coldFixture(t, EngineOptions{ColdSlotsPer10: 1})
		if err := eng.src.(interface {
			PutItems(context.Context, []api.Item) error
		}).PutItems(context.Background(), []api.Item{{ID: "near2", Features: map[string]float64{"x": 0, "y": 1.5}}}); err != nil {
			t.Fatal(err)
		}
		want := []string{"w1", "w2", "w3", "w4", "w5", "near"}
		if bound == 1 {
			want = []string{"w1", "w2", "w3", "w4", "w5", "near2"}
		}
		if got := recommend(t, eng, 6, false); !slices.Equal(ids(got), want) {
			t.Errorf("bound %d: %v, want %v", bound, ids(got), want)
		}
	}
}

// evidenceFixture is coldFixture's warm catalogue on three features x, y,
// z (w0..w7 at x = k; "me" viewed w0, so itemknn lists w1..w7 and wk lies
// k² from the history), a plain Euclidean content metric (mean 0, scale
// 1: squared distances are the raw ones) with cold rule r, and the cold
// items given.
func evidenceFixture(t *testing.T, r content.ColdRule, cold ...api.Item) *Engine {
	t.Helper()
	st := mustStore(t)
	ctx := context.Background()
	var items []api.Item
	for k := 0; k < 8; k++ {
		items = append(items, api.Item{ID: fmt.Sprintf("w%d", k), Features: map[string]float64{"x": float64(k)}})
	}
	if err := st.PutItems(ctx, append(items, cold...)); err != nil {
		t.Fatal(err)
	}
	for u := 0; u < 6; u++ {
		add(t, st, fmt.Sprintf("p%d", u), "view", "w0", "w1", "w2", "w3", "w4", "w5", "w6", "w7")
	}
	add(t, st, "me", "view", "w0")
	eng := NewEngine(st, EngineOptions{PopularityTTL: time.Nanosecond})
	eng.Install(&Served{Info: api.ModelInfo{Name: "itemknn", Version: "v1"}, Model: fitItemKNN(t, st, 10)}, true)
	c, err := content.NewContent([]string{"x", "y", "z"}, retrieval.Euclidean([]float64{0, 0, 0}, []float64{1, 1, 1})).WithColdRule(r)
	if err != nil {
		t.Fatal(err)
	}
	eng.Install(&Served{Info: api.ModelInfo{Name: content.Name, Version: "c1"}, Model: c}, false)
	return eng
}

// TestEngine_coldSlots_evidence: the cold rule on a catalogue where every
// distance is known. With support x 5, y 1, z 0 only x is evidence (at
// least content.MinColdSupport = 2 known items have it). "junk" ({zzz: 1}, a
// feature the model does not know) and "ysolo" ({y: 1}) have no evidence
// and never take a slot, though both sit at the origin of the supported
// features, on w0. "xy" ({x: 0.5, y: 3}) is placed by x alone: (0.5, 0,
// 0), 0.25 from w0 (its full vector would be 9.25), score 1/(1+0.25).
// "far" ({x: 1.5}) is 2.25 from w0: it beats w5 (25) but not a threshold
// of 1.
func TestEngine_coldSlots_evidence(t *testing.T) {
	support := []uint32{5, 1, 0}
	junk := api.Item{ID: "junk", Features: map[string]float64{"zzz": 1}}
	ysolo := api.Item{ID: "ysolo", Features: map[string]float64{"y": 1}}
	xy := api.Item{ID: "xy", Features: map[string]float64{"x": 0.5, "y": 3}}
	far := api.Item{ID: "far", Features: map[string]float64{"x": 1.5}}
	for _, tc := range []struct {
		name    string
		maxDist float64
		cold    []api.Item
		want    []string
		score   float64 // of the cold item last, when there is one
	}{
		{"no evidence, beyond the threshold", 1, []api.Item{junk, ysolo, far}, []string{"w1", "w2", "w3", "w4", "w5"}, 0},
		{"placed by supported features", 1, []api.Item{junk, ysolo, far, xy}, []string{"w1", "w2", "w3", "w4", "xy"}, 1 / 1.25},
		// The full vector of xy (9.25 from w0) is beyond a threshold of 9:
		// it takes the slot only because y, no evidence, is left out.
		{"unsupported feature left out", 9, []api.Item{xy}, []string{"w1", "w2", "w3", "w4", "xy"}, 1 / 1.25},
		{"no threshold", math.Inf(1), []api.Item{junk, ysolo, far}, []string{"w1", "w2", "w3", "w4", "far"}, 1 / 3.25},
		{"threshold at the distance", 2.25, []api.Item{junk, far}, []string{"w1", "w2", "w3", "w4", "far"}, 1 / 3.25},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eng := evidenceFixture(t, content.ColdRule{Support: support, MaxDistance: tc.maxDist}, tc.cold...)
			got := recommend(t, eng, 5, false)
			if !slices.Equal(ids(got), tc.want) {
				t.Fatalf("n=5: %v, want %v", ids(got), tc.want)
			}
			for _, it := range got {
				if cold := it.ItemID == tc.want[4] && tc.score != 0; it.Cold != cold || cold && it.Score != tc.score {
					t.Errorf("%s: cold %v score %v, want cold %v score %v", it.ItemID, it.Cold, it.Score, cold, tc.score)
				}
			}
		})
	}
	t.Run("a model without a cold rule", func(t *testing.T) {
		// Every model feature is evidence and no distance is too far; junk
		// (no model feature) still has none.
		eng := evidenceFixture(t, content.ColdRule{Support: support, MaxDistance: 1}, junk, ysolo)
		m := eng.Lookup(content.Name)
		eng.Install(&Served{Info: api.ModelInfo{Name: content.Name, Version: "c0"}, Model: content.NewContent(m.Model.(*content.Content).Names(), m.Model.(*content.Content).Metric())}, false)
		got := recommend(t, eng, 5, false)
		if want := []string{"w1", "w2", "w3", "w4", "ysolo"}; !slices.Equal(ids(got), want) || got[4].Score != 0.5 {
			t.Fatalf("n=5: %v (last score %v), want %v, ysolo 1 from w0: score 0.5", ids(got), got[4].Score, want)
		}
	})
}

// A cold list is the coldListLen cold items nearest to an item in
// (distance, id) order, as sorting every cold item by its exact squared
// distance gives, ties and all (the scan skips most of them early).
func TestColdItems_nearestTo(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var vecs [][]float64
	for k := 0; k < 300; k++ {
		v := make([]float64, 6)
		for j := range v {
			v[j] = float64(rng.IntN(4)) // few values: many equal distances
		}
		vecs = append(vecs, v)
	}
	idx, err := retrieval.BuildIndex(vecs)
	if err != nil {
		t.Fatal(err)
	}
	ix := &contentIndex{searcher: &retrieval.Searcher{Index: idx}}
	cs := &coldItems{nearest: make([]atomic.Pointer[coldList], len(vecs))}
	for k := 0; k < len(vecs); k += 3 { // every third item is cold
		cs.ids = append(cs.ids, k)
		cs.vecs = append(cs.vecs, vecs[k])
	}
	for _, id := range []int{0, 1, 2, 150, 299} {
		var want []retrieval.Neighbour
		for k, cid := range cs.ids {
			if cid != id {
				want = append(want, retrieval.Neighbour{ID: cid, Distance: retrieval.SquaredDistance(vecs[id], cs.vecs[k])})
			}
		}
		slices.SortFunc(want, func(a, b retrieval.Neighbour) int {
			if c := cmp.Compare(a.Distance, b.Distance); c != 0 {
				return c
			}
			return cmp.Compare(a.ID, b.ID)
		})
		got := cs.nearestTo(ix, id)
		if !slices.Equal(got.nbs, want[:coldListLen]) || got.all {
			t.Fatalf("item %d: %v (all %v), want %v", id, got.nbs, got.all, want[:coldListLen])
		}
	}
}
