package serving

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/recsys/content"
	"github.com/recsys-engine/recsys/retrieval"
)

// coldStartBySearch is coldStart as first written: an exact search of the
// whole index per history item, keeping the cold items (those of
// popularity 0 that the test knows have no events, and that have a
// nonzero feature: evidence, under a content model without a cold rule).
// The engine now searches the cold items alone and must give the same
// answers.
func coldStartBySearch(c *catalogueCache, ix *contentIndex, prof api.Profile, skip func(uint32) bool, slots int, touched, noEvidence map[string]bool) []coldPick {
	cold := func(k int) bool {
		i := ix.items[k]
		id := c.cat.ItemIDs[i]
		return int(i) < len(c.cat.Popularity) && c.cat.Popularity[i] == 0 && !touched[id] && !noEvidence[id] && !skip(i)
	}
	best := map[uint32]coldPick{}
	hist := prof.Positive
	if len(hist) > 20 {
		hist = hist[len(hist)-20:]
	}
	for _, j := range hist {
		id, ok := ix.byItem[j]
		if !ok {
			continue
		}
		nbs, _ := ix.searcher.SimilarToItem(id, slots, func(k int) bool { return !cold(k) })
		for _, nb := range nbs {
			i := ix.items[nb.ID]
			if b, ok := best[i]; !ok || nb.Distance < b.dist {
				best[i] = coldPick{item: i, reason: j, dist: nb.Distance}
			}
		}
	}
	var cands []coldPick
	for _, b := range best {
		cands = append(cands, b)
	}
	slices.SortFunc(cands, func(a, b coldPick) int {
		if a.dist != b.dist {
			return cmp.Compare(a.dist, b.dist)
		}
		return int(a.item) - int(b.item)
	})
	return cands[:min(slots, len(cands))]
}

// TestEngine_coldStart_matchesExactSearch: on items with 0/1 features (many
// ties, as with genres), the cold slots equal those of a whole-index exact
// search, for several users, slot counts, consumed cold items, a category
// filter and a hidden cold item. Disliked items (events, no positive) are
// never cold, nor is an item whose features are all 0 (no evidence). With
// 49 cold items and lists of 32, both the cached lists and the fallback
// scan are exercised.
func TestEngine_coldStart_matchesExactSearch(t *testing.T) {
	st := mustStore(t)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(9, 9))
	names := []string{"f0", "f1", "f2", "f3", "f4"}
	var items []api.Item
	for i := 0; i < 150; i++ {
		f := map[string]float64{}
		for _, n := range names {
			f[n] = float64(rng.IntN(2))
		}
		cats := []string{"a"}
		if i%7 == 0 {
			cats = []string{"b"}
		}
		items = append(items, api.Item{ID: fmt.Sprintf("i%d", i), Features: f, Categories: cats})
	}
	items[100].Hidden = true
	noEvidence := map[string]bool{}
	for k := 101; k < 104; k++ {
		for _, n := range names {
			items[k].Features[n] = 0
		}
	}
	for _, it := range items {
		if !slices.ContainsFunc(names, func(n string) bool { return it.Features[n] != 0 }) {
			noEvidence[it.ID] = true
		}
	}
	if err := st.PutItems(ctx, items); err != nil {
		t.Fatal(err)
	}
	// Items 0..79 are warm; 80..99 are only disliked (known-unpopular);
	// 100..149 stay cold.
	touched := map[string]bool{}
	for u := 0; u < 30; u++ {
		var its []string
		for k := 0; k < 15; k++ {
			its = append(its, fmt.Sprintf("i%d", rng.IntN(80)))
		}
		add(t, st, fmt.Sprintf("u%d", u), "view", its...)
		var dis []string
		for k := 0; k < 3; k++ {
			dis = append(dis, fmt.Sprintf("i%d", 80+rng.IntN(20)))
		}
		add(t, st, fmt.Sprintf("u%d", u), "dislike", dis...)
		for _, it := range append(its, dis...) {
			touched[it] = true
		}
	}
	eng := NewEngine(st, EngineOptions{PopularityTTL: time.Hour})
	mean, scale := make([]float64, len(names)), make([]float64, len(names))
	for k := range scale {
		scale[k] = 1
	}
	eng.Install(&Served{Info: api.ModelInfo{Name: content.Name, Version: "v1"}, Model: content.NewContent(names, retrieval.Euclidean(mean, scale))}, false)
	c, err := eng.catalogue(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := eng.contentSearch().index(ctx, c.itemsVersion)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for u := 0; u < 30; u++ {
		prof, err := st.Profile(ctx, fmt.Sprintf("u%d", u))
		if err != nil {
			t.Fatal(err)
		}
		req := api.RecommendRequest{UserID: fmt.Sprintf("u%d", u), N: 10, ExcludeConsumed: true}
		if u%3 == 0 {
			req.Categories = []string{"b"} // leaves few cold items: the fallback scan
		}
		skip := newFilter(c.cat, prof, req, nil)
		for _, slots := range []int{1, 3, 50} {
			got, _, err := eng.coldStart(ctx, c, prof, skip, slots)
			if err != nil {
				t.Fatal(err)
			}
			want := coldStartBySearch(c, ix, prof, skip, slots, touched, noEvidence)
			if len(want) == 0 {
				t.Fatalf("u%d slots=%d: the reference found no cold items; the test data is wrong", u, slots)
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("u%d slots=%d:\n got %v\nwant %v", u, slots, got, want)
			}
			for _, p := range got {
				if id := c.cat.ItemIDs[p.item]; id == "i100" || touched[id] || noEvidence[id] {
					t.Errorf("u%d: %s offered as cold (hidden, has events or no evidence)", u, id)
				}
			}
			checked++
		}
	}
	// One history item and many consumed cold items: each list is one
	// item's nearest, so a truncated cached list must fall back to a scan.
	for j := 0; j < 80; j += 3 {
		prof := api.Profile{Known: true, Positive: []uint32{c.cat.Index[fmt.Sprintf("i%d", j)]}}
		for k := 100; k < 150; k += 1 + j%4 {
			prof.Negative = append(prof.Negative, c.cat.Index[fmt.Sprintf("i%d", k)])
		}
		prof.Consumed = append(slices.Clone(prof.Positive), prof.Negative...)
		slices.Sort(prof.Consumed)
		skip := newFilter(c.cat, prof, api.RecommendRequest{N: 10, ExcludeConsumed: j%2 == 0}, nil)
		for _, slots := range []int{1, 10, 35} {
			got, _, err := eng.coldStart(ctx, c, prof, skip, slots)
			if err != nil {
				t.Fatal(err)
			}
			want := coldStartBySearch(c, ix, prof, skip, slots, touched, noEvidence)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("i%d slots=%d:\n got %v\nwant %v", j, slots, got, want)
			}
			checked++
		}
	}
	t.Logf("%d lists compared", checked)
}

// TestEngine_contentApproximateAboveThreshold: above ContentApproxAbove
// items the content index is HNSW, below it exact; both answer
// GET /items/{id}/similar?by=content and POST /search/similar with
// (nearly) the same neighbours, and bad input keeps its 4xx error codes.
func TestEngine_contentApproximateAboveThreshold(t *testing.T) {
	st := mustStore(t)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	items := putABCItems(t, st, 300, "i%03d", func() (a, b, c float64) { return rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64() })
	names, feats, err := st.ItemFeatures(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var rows [][]float64
	for _, f := range feats {
		if f != nil {
			rows = append(rows, f)
		}
	}
	mean, scale, err := retrieval.Standardization(rows)
	if err != nil {
		t.Fatal(err)
	}
	met := retrieval.Euclidean(mean, scale)
	info := api.ModelInfo{Name: content.Name, Version: "v1"}
	exact := NewEngine(st, EngineOptions{ContentApproxAbove: -1})
	approx := NewEngine(st, EngineOptions{ContentApproxAbove: 299})
	exact.Install(&Served{Info: info, Model: content.NewContent(names, met)}, false)
	approx.Install(&Served{Info: info, Model: content.NewContent(names, met)}, false)

	// The first content request builds the exact index and starts the
	// HNSW build in the background; searches are exact until it is done.
	if _, err := approx.Similar(ctx, api.SimilarRequest{ItemID: items[0].ID, N: 10, By: "content"}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); !approx.contentSearch().built.Load().searcher.Approximate(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the HNSW index was not swapped in within a minute")
		}
	}
	agree, total := 0, 0
	for i := 0; i < 300; i += 7 {
		req := api.SimilarRequest{ItemID: items[i].ID, N: 10, By: "content"}
		a, err := exact.Similar(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		b, err := approx.Similar(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]bool{}
		for _, it := range a.Items {
			want[it.ItemID] = true
		}
		for _, it := range b.Items {
			if it.ItemID == req.ItemID {
				t.Fatalf("%s is its own neighbour", req.ItemID)
			}
			if want[it.ItemID] {
				agree++
			}
		}
		total += len(a.Items)
	}
	if r := float64(agree) / float64(total); r < 0.95 {
		t.Errorf("approximate content neighbours agree with exact on %.3f, want ≥ 0.95", r)
	}
	if cm := exact.contentSearch(); cm.built.Load() == nil || cm.built.Load().searcher.Approximate() {
		t.Error("300 items with threshold -1: want exact search")
	}
	if cm := approx.contentSearch(); cm.built.Load() == nil || !cm.built.Load().searcher.Approximate() {
		t.Error("300 items with threshold 299: want HNSW search")
	}
	got, err := approx.SearchSimilar(ctx, map[string]float64{"a": 0, "b": 0, "c": 0}, 5)
	if err != nil || len(got.Items) != 5 {
		t.Fatalf("search by example: %v, %v", got, err)
	}
	var ae *api.Error
	if _, err := approx.Similar(ctx, api.SimilarRequest{ItemID: "nope", N: 5, By: "content"}); !errors.As(err, &ae) || ae.Code != api.CodeNotFound {
		t.Errorf("unknown item: got %v, want not found", err)
	}
	if _, err := approx.SearchSimilar(ctx, map[string]float64{"zzz": 1}, 5); err == nil {
		t.Error("no known feature: want a field error")
	}
}

// TestEngine_Install_content: the content metric goes through the one
// install path into the served set, where content search finds it, but it
// is no recommender: it never becomes the active model, cannot be
// activated or asked for with ?model=, and a persisted one loads back
// through its kind's decoder like any other model.
func TestEngine_Install_content(t *testing.T) {
	st := mustStore(t)
	ctx := context.Background()
	if err := st.PutItems(ctx, []api.Item{{ID: "a", Features: map[string]float64{"x": 0}}, {ID: "b", Features: map[string]float64{"x": 1}}}); err != nil {
		t.Fatal(err)
	}
	add(t, st, "u", "view", "a")
	cm := &Served{Info: api.ModelInfo{Name: content.Name, Version: "c1"},
		Model: content.NewContent([]string{"x"}, retrieval.Euclidean([]float64{0}, []float64{1}))}
	eng := NewEngine(st, EngineOptions{PopularityTTL: time.Hour})
	eng.Install(cm, true)
	if eng.Active() != nil || eng.Lookup(content.Name) != cm {
		t.Fatalf("active %v, served content %v: want no active model and the content model served", eng.Active(), eng.Lookup(content.Name))
	}
	if err := eng.Activate(content.Name); api.ErrorCode(err) != api.CodeNotFound {
		t.Errorf("activating the content model: %v, want not_found", err)
	}
	if _, err := eng.Recommend(ctx, api.RecommendRequest{UserID: "u", N: 1, Model: content.Name}); api.ErrorCode(err) != api.CodeInvalid {
		t.Errorf("?model=content: %v, want invalid", err)
	}
	if got, err := eng.Similar(ctx, api.SimilarRequest{ItemID: "a", N: 1, By: "content"}); err != nil || !slices.Equal(ids(got.Items), []string{"b"}) || got.ModelVersion != "c1" {
		t.Fatalf("by=content: %+v, %v; want b from c1", got, err)
	}

	blob, err := cm.Model.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if err := st.PutModel(ctx, cm.Info, blob); err != nil {
		t.Fatal(err)
	}
	again := NewEngine(st, EngineOptions{PopularityTTL: time.Hour})
	if errs := again.LoadPersisted(ctx, st); len(errs) != 0 || again.Active() != nil {
		t.Fatalf("loading: %v, active %v", errs, again.Active())
	}
	if got, err := again.SearchSimilar(ctx, map[string]float64{"x": 0.9}, 1); err != nil || !slices.Equal(ids(got.Items), []string{"b"}) || got.Model != content.Name {
		t.Fatalf("search after loading: %+v, %v; want b from the content model", got, err)
	}
}
