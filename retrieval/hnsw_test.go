package retrieval

import (
	"math"
	"math/rand/v2"
	"sync"
	"testing"
)

// clusteredVectors draws n points around c random centres in m dimensions
// (unit-variance centres, noise sd 0.3): the shape of projected item
// features, which are far from uniform.
func clusteredVectors(rng *rand.Rand, n, m, c int) [][]float64 {
	centres := randVectors(rng, c, m)
	out := make([][]float64, n)
	for i := range out {
		ctr := centres[rng.IntN(c)]
		v := make([]float64, m)
		for j := range v {
			v[j] = ctr[j] + 0.3*rng.NormFloat64()
		}
		out[i] = v
	}
	return out
}

// recallAt is |approx ∩ exact| / |exact| averaged over queries, by id.
func recallAt(t testing.TB, exact *Index, approx *HNSW, qs [][]float64, k int) float64 {
	t.Helper()
	hit, total := 0, 0
	for _, q := range qs {
		want := exact.Search(q, k, nil)
		got := approx.Search(q, k, nil)
		if len(got) != len(want) {
			t.Fatalf("approximate search returned %d results, want %d", len(got), len(want))
		}
		ids := map[int]bool{}
		for _, nb := range want {
			ids[nb.ID] = true
		}
		for i, nb := range got {
			if i > 0 && got[i-1].Distance > nb.Distance {
				t.Fatalf("results not in increasing distance: %v", got)
			}
			if d := SqDist(q, exact.Vector(nb.ID)); math.Abs(d-nb.Distance) > 1e-9*(1+d) {
				t.Fatalf("id %d: reported distance %g, true %g", nb.ID, nb.Distance, d)
			}
			if ids[nb.ID] {
				hit++
			}
		}
		total += len(want)
	}
	return float64(hit) / float64(total)
}

// TestHNSW_recall: recall@10 against the exact index on generated data.
// Bounds: ≥ 0.95 on clustered data (m = 16 and 32) and ≥ 0.90 on uniform
// Gaussian data at m = 16, the hard case for graph search.
func TestHNSW_recall(t *testing.T) {
	n := 20_000
	if testing.Short() || raceEnabled {
		n = 4_000
	}
	for _, tc := range []struct {
		name  string
		m     int
		clust int // 0: Gaussian
		bound float64
	}{
		{"clustered/m=16", 16, 50, 0.95},
		{"clustered/m=32", 32, 50, 0.95},
		{"gaussian/m=16", 16, 0, 0.90},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(7, uint64(tc.m)))
			var vecs, qs [][]float64
			if tc.clust > 0 {
				all := clusteredVectors(rng, n+200, tc.m, tc.clust)
				vecs, qs = all[:n], all[n:]
			} else {
				vecs, qs = randVectors(rng, n, tc.m), randVectors(rng, 200, tc.m)
			}
			ix, err := BuildIndex(vecs)
			if err != nil {
				t.Fatal(err)
			}
			h, err := BuildHNSW(ix, HNSWOptions{Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			r := recallAt(t, ix, h, qs, 10)
			t.Logf("n=%d recall@10 = %.4f", n, r)
			if r < tc.bound {
				t.Errorf("recall@10 = %.4f < %.2f", r, tc.bound)
			}
		})
	}
}

// TestHNSW_smallIsExact: with ef ≥ n every reachable node is examined, so
// on a small index the approximate answer equals the exact one.
func TestHNSW_smallIsExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	ix, _ := BuildIndex(randVectors(rng, 60, 5))
	h, err := BuildHNSW(ix, HNSWOptions{M: 4, EfSearch: 64, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range randVectors(rng, 20, 5) {
		want, got := ix.Search(q, 7, nil), h.Search(q, 7, nil)
		if len(got) != len(want) {
			t.Fatalf("got %d results, want %d", len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("result %d: got %v, want %v", i, got[i], want[i])
			}
		}
	}
	for id := 0; id < 60; id++ {
		for _, nb := range h.SearchID(id, 5, nil) {
			if nb.ID == id {
				t.Fatalf("SearchID(%d) returned the item itself", id)
			}
		}
	}
}

// TestHNSW_filtered: a query that excludes all but a few items (cold-start
// style) still returns the k nearest allowed items — the widening and the
// exact fallback make it exact.
func TestHNSW_filtered(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	vecs := clusteredVectors(rng, 6000, 8, 20)
	ix, _ := BuildIndex(vecs)
	h, err := BuildHNSW(ix, HNSWOptions{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	allowed := func(id int) bool { return id%97 == 0 } // 62 items
	excl := func(id int) bool { return !allowed(id) }
	for qi, q := range clusteredVectors(rng, 20, 8, 20) {
		want, got := ix.Search(q, 10, excl), h.Search(q, 10, excl)
		if len(got) != 10 || len(want) != 10 {
			t.Fatalf("query %d: %d results, exact %d", qi, len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("query %d result %d: got %v, want %v", qi, i, got[i], want[i])
			}
		}
	}
	// Fewer allowed than k: all of them, and no more.
	few := func(id int) bool { return id != 10 && id != 20 && id != 30 }
	if got := h.SearchID(10, 10, few); len(got) != 2 {
		t.Fatalf("got %v, want items 20 and 30", got)
	}
}

func TestHNSW_badInput(t *testing.T) {
	if _, err := BuildHNSW(NewIndex(4), HNSWOptions{}); err == nil {
		t.Error("empty index: want an error")
	}
	ix, _ := BuildIndex([][]float64{{0, 0}, {1, 0}, {0, 2}})
	h, err := BuildHNSW(ix, HNSWOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := h.Search([]float64{1}, 2, nil); got != nil {
		t.Errorf("wrong dimension: got %v", got)
	}
	if got := h.Search([]float64{1, 0}, 0, nil); got != nil {
		t.Errorf("k = 0: got %v", got)
	}
	if got := h.SearchID(3, 1, nil); got != nil {
		t.Errorf("id out of range: got %v", got)
	}
	// Hand-checked: from (1,0) the others are at squared distances 1 and 5.
	got := h.SearchID(1, 5, nil)
	if len(got) != 2 || got[0] != (Neighbour{0, 1}) || got[1] != (Neighbour{2, 5}) {
		t.Errorf("SearchID(1) = %v, want [{0 1} {2 5}]", got)
	}
}

// TestHNSW_concurrent: parallel searches agree with a sequential run (and
// race-free under -race).
func TestHNSW_concurrent(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	ix, _ := BuildIndex(clusteredVectors(rng, 3000, 12, 15))
	h, _ := BuildHNSW(ix, HNSWOptions{Seed: 4})
	qs := clusteredVectors(rng, 40, 12, 15)
	want := make([][]Neighbour, len(qs))
	for i, q := range qs {
		want[i] = h.Search(q, 10, nil)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i, q := range qs {
				got := h.Search(q, 10, nil)
				for j := range got {
					if got[j] != want[i][j] {
						errs <- "concurrent search differs"
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
}

// TestSearcher_switchesToApprox: above ApproxAbove the searcher answers
// from HNSW, below it exactly.
func TestSearcher_switchesToApprox(t *testing.T) {
	met := mustMetric(t, 6, 4, 1)
	rng := rand.New(rand.NewPCG(2, 2))
	items := randVectors(rng, 500, 6)
	small, err := NewSearcherWith(met, items, SearchOptions{ApproxAbove: 500})
	if err != nil {
		t.Fatal(err)
	}
	big, err := NewSearcherWith(met, items, SearchOptions{ApproxAbove: 499})
	if err != nil {
		t.Fatal(err)
	}
	if small.Approximate() || !big.Approximate() {
		t.Fatalf("approximate: 500 items with threshold 500 = %v, with 499 = %v", small.Approximate(), big.Approximate())
	}
	a, _ := small.SimilarToItem(3, 10, nil)
	b, _ := big.SimilarToItem(3, 10, nil)
	same := 0
	for i := range a {
		for j := range b {
			if a[i].ID == b[j].ID {
				same++
			}
		}
	}
	if same < 9 {
		t.Errorf("exact %v vs approximate %v: only %d of 10 agree", a, b, same)
	}
	if _, err := big.SimilarToItem(500, 10, nil); err == nil {
		t.Error("item out of range: want an error")
	}
	if _, err := big.SimilarToVector([]float64{1, 2}, 10, nil); err == nil {
		t.Error("wrong feature count: want an error")
	}
}

// TestHNSW_parallelBuild: a graph built by several goroutines at once has
// the recall bound of a sequential one, against the exact index, and
// every node is linked (race-free under -race).
func TestHNSW_parallelBuild(t *testing.T) {
	n := 20_000
	if testing.Short() || raceEnabled {
		n = 3_000
	}
	rng := rand.New(rand.NewPCG(8, 16))
	all := clusteredVectors(rng, n+200, 16, 50)
	ix, err := BuildIndex(all[:n])
	if err != nil {
		t.Fatal(err)
	}
	h, err := BuildHNSW(ix, HNSWOptions{Seed: 1, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if h.locks != nil {
		t.Error("the built graph still takes locks")
	}
	for i := range int32(n) {
		if h.row(i, 0)[0] == 0 {
			t.Fatalf("node %d has no layer-0 links", i)
		}
	}
	r := recallAt(t, ix, h, all[n:], 10)
	t.Logf("n=%d recall@10 = %.4f", n, r)
	if r < 0.95 {
		t.Errorf("recall@10 = %.4f < 0.95", r)
	}
}
