package serving

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/recsys/content"
	"github.com/recsys-engine/recsys/retrieval"
	"github.com/recsys-engine/recsys/storage"
)

// TestEngine_hybridSimilar_prefix: by=hybrid ranks the same way for every
// n, so the answer for n is the first n of the answer for any larger n;
// scores do not increase down the list, equal scores are ordered by
// popularity (more popular first), and the scores say something (not one
// value for the whole list).
func TestEngine_hybridSimilar_prefix(t *testing.T) {
	st := mustStore(t)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(3, 4))
	putABCItems(t, st, 150, "i%d", func() (a, b, c float64) { return float64(rng.IntN(3)), float64(rng.IntN(3)), rng.NormFloat64() })
	for u := 0; u < 80; u++ {
		var its []string
		for k := 0; k < 4+rng.IntN(12); k++ {
			its = append(its, fmt.Sprintf("i%d", rng.IntN(150)))
		}
		add(t, st, fmt.Sprintf("u%d", u), "view", its...)
	}
	m := fitItemKNN(t, st, 30)
	eng := NewEngine(st, EngineOptions{PopularityTTL: time.Hour})
	eng.Install(&Served{Info: api.ModelInfo{Name: "itemknn", Version: "v1"}, Model: m}, true)
	eng.Install(&Served{Info: api.ModelInfo{Name: content.Name, Version: "c1"}, Model: content.NewContent([]string{"a", "b", "c"},
		retrieval.Euclidean([]float64{0, 0, 0}, []float64{1, 1, 1}))}, false)
	cat, err := st.Catalogue(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pop := func(id string) int64 { return cat.Popularity[cat.Index[id]] }
	ns := []int{1, 5, 10, 20, 50}
	for i := 0; i < 150; i += 13 {
		id := fmt.Sprintf("i%d", i)
		lists := map[int][]api.ScoredItem{}
		for _, n := range ns {
			got, err := eng.Similar(ctx, api.SimilarRequest{ItemID: id, N: n, By: "hybrid"})
			if err != nil {
				t.Fatal(err)
			}
			if got.Model != "itemknn+content" || len(got.Items) != n {
				t.Fatalf("%s n=%d: model %q, %d items", id, n, got.Model, len(got.Items))
			}
			lists[n] = got.Items
		}
		long := lists[50]
		for _, n := range ns {
			if got, want := lists[n], long[:n]; fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s: n=%d is not the first %d of n=50:\n got %v\nwant %v", id, n, n, got, want)
			}
		}
		distinct := map[float64]bool{}
		for k := 1; k < len(long); k++ {
			a, b := long[k-1], long[k]
			distinct[a.Score] = true
			if a.Score < b.Score || a.Score == b.Score && pop(a.ItemID) < pop(b.ItemID) {
				t.Errorf("%s: %s (score %v, popularity %d) before %s (score %v, popularity %d)",
					id, a.ItemID, a.Score, pop(a.ItemID), b.ItemID, b.Score, pop(b.ItemID))
			}
			if b.ItemID == id {
				t.Errorf("%s is its own neighbour", id)
			}
		}
		if len(distinct) < 5 {
			t.Errorf("%s: %d distinct scores in 50 items: %v", id, len(distinct), long)
		}
	}
}

// putABCItems stores n items, the k-th with id fmt.Sprintf(id, k) and the
// features a, b and c that draw gives it, and returns them.
func putABCItems(t *testing.T, st *storage.Store, n int, id string, draw func() (a, b, c float64)) []api.Item {
	t.Helper()
	items := make([]api.Item, n)
	for k := range items {
		a, b, c := draw()
		items[k] = api.Item{ID: fmt.Sprintf(id, k), Features: map[string]float64{"a": a, "b": b, "c": c}}
	}
	if err := st.PutItems(context.Background(), items); err != nil {
		t.Fatal(err)
	}
	return items
}
