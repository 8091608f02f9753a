package retrieval

import (
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

// bruteTopK sorts every item by distance (ties by id).
func bruteTopK(vs [][]float64, q []float64, k int, skip func(int) bool) []Neighbour {
	var all []Neighbour
	for id, v := range vs {
		if skip != nil && skip(id) {
			continue
		}
		all = append(all, Neighbour{id, SqDist(q, v)})
	}
	slices.SortFunc(all, func(a, b Neighbour) int {
		if a.Distance != b.Distance {
			if a.Distance < b.Distance {
				return -1
			}
			return 1
		}
		return a.ID - b.ID
	})
	return all[:min(k, len(all))]
}

// sameNeighbours compares ids exactly and distances up to rounding (the
// index sums in a different order).
func sameNeighbours(a, b []Neighbour) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].ID != b[i].ID || math.Abs(a[i].Distance-b[i].Distance) > 1e-9*(1+b[i].Distance) {
			return false
		}
	}
	return true
}

func TestIndex_Search_matchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct{ n, m, k int }{{50, 3, 5}, {500, 7, 10}, {300, 16, 300}, {10, 2, 20}} {
		vs := randVectors(rng, tc.n, tc.m)
		// Duplicates make ties.
		vs[3] = slices.Clone(vs[1])
		ix, err := BuildIndex(vs)
		if err != nil {
			t.Fatal(err)
		}
		excl := func(id int) bool { return id%7 == 0 }
		for trial := 0; trial < 20; trial++ {
			q := randVectors(rng, 1, tc.m)[0]
			if trial == 0 {
				q = slices.Clone(vs[1])
			}
			got := ix.Search(q, tc.k, excl)
			want := bruteTopK(vs, q, tc.k, excl)
			if !sameNeighbours(got, want) {
				t.Fatalf("n=%d m=%d k=%d: got %v want %v", tc.n, tc.m, tc.k, got, want)
			}
		}
		got := ix.SearchID(5, tc.k, nil)
		want := bruteTopK(vs, vs[5], tc.k, func(id int) bool { return id == 5 })
		if !sameNeighbours(got, want) {
			t.Fatalf("SearchID: got %v want %v", got, want)
		}
	}
}

func TestIndex_badInput(t *testing.T) {
	ix := NewIndex(3)
	if _, err := ix.Add([]float64{1, 2}); err == nil {
		t.Error("Add accepted a vector of the wrong length")
	}
	if got := ix.Search([]float64{1, 2, 3}, 5, nil); len(got) != 0 {
		t.Errorf("empty index returned %v", got)
	}
	if got := ix.Search([]float64{1}, 5, nil); got != nil {
		t.Errorf("wrong-length query returned %v", got)
	}
	if err := ix.Set(0, []float64{1, 2, 3}); err == nil {
		t.Error("Set accepted an unknown id")
	}
	if got := ix.SearchID(4, 2, nil); got != nil {
		t.Errorf("SearchID of unknown id returned %v", got)
	}
}

// TestIndex_concurrent runs searches while items are added (go test -race).
func TestIndex_concurrent(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	ix, err := BuildIndex(randVectors(rng, 200, 8))
	if err != nil {
		t.Fatal(err)
	}
	qs := randVectors(rng, 50, 8)
	extra := randVectors(rng, 50, 8)
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, q := range qs {
				if got := ix.Search(q, 10, nil); len(got) != 10 {
					t.Errorf("got %d results", len(got))
				}
			}
		}()
	}
	for _, v := range extra {
		if _, err := ix.Add(v); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	if ix.Len() != 250 {
		t.Fatalf("Len %d", ix.Len())
	}
}

func TestMetric_ProjectAndIndex(t *testing.T) {
	met := mustMetric(t, 5, 3, 1)
	rng := rand.New(rand.NewPCG(5, 5))
	items := randVectors(rng, 40, 5)
	proj, err := met.ProjectAll(items)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := BuildIndex(proj)
	if err != nil {
		t.Fatal(err)
	}
	// The index ranks by the learned distance on raw vectors.
	q := randVectors(rng, 1, 5)[0]
	pq, _ := met.Project(q)
	got := ix.Search(pq, 5, nil)
	for _, nb := range got {
		d, err := met.Distance(q, items[nb.ID])
		if err != nil {
			t.Fatal(err)
		}
		if diff := d - nb.Distance; diff > 1e-9 || diff < -1e-9 {
			t.Fatalf("index distance %v, metric distance %v", nb.Distance, d)
		}
	}
	// Hand-computed: d=1, m=1, L=[2], mean 1, scale 0.5: x=2 → z=2 → 4.
	one := &Metric{Mean: []float64{1}, Scale: []float64{0.5}, L: mat1(2)}
	if p, _ := one.Project([]float64{2}); p[0] != 4 {
		t.Fatalf("Project = %v, want [4]", p)
	}
	if _, err := one.Project([]float64{1, 2}); err == nil {
		t.Fatal("Project accepted a vector of the wrong length")
	}
}

func TestSearcher(t *testing.T) {
	met := mustMetric(t, 4, 2, 3)
	rng := rand.New(rand.NewPCG(8, 8))
	items := randVectors(rng, 30, 4)
	s, err := NewSearcher(met, items)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.SimilarToItem(4, 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := s.SimilarToVector(items[4], 4, nil)
	if want[0].ID != 4 || want[0].Distance > 1e-12 {
		t.Fatalf("item 4 is not its own nearest neighbour: %v", want)
	}
	if !sameNeighbours(got, want[1:]) {
		t.Fatalf("by item %v, by vector %v", got, want[1:])
	}
	if _, err := s.SimilarToItem(30, 3, nil); err == nil {
		t.Error("accepted an unknown item")
	}
	if _, err := s.SimilarToVector([]float64{1}, 3, nil); err == nil {
		t.Error("accepted a vector of the wrong length")
	}
}

// SquaredDistanceWithin equals SquaredDistance bit for bit whenever that
// is within the bound, and is above the bound whenever that is.
func TestSquaredDistanceWithin(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, dim := range []int{1, 3, 4, 7, 16, 33} {
		for n := 0; n < 200; n++ {
			q, row := make([]float64, dim), make([]float64, dim)
			for j := range q {
				q[j], row[j] = rng.NormFloat64(), rng.NormFloat64()
			}
			full := SquaredDistance(q, row)
			for _, bound := range []float64{0, full / 4, full / 2, math.Nextafter(full, 0), full, full * 2, math.Inf(1)} {
				got := SquaredDistanceWithin(q, row, bound)
				if full <= bound && got != full {
					t.Fatalf("dim %d: within %v gave %v, want %v exactly", dim, bound, got, full)
				}
				if full > bound && !(got > bound && got <= full) {
					t.Fatalf("dim %d: bound %v below %v, got %v", dim, bound, full, got)
				}
			}
		}
	}
	if got := SquaredDistanceWithin([]float64{1, 2, 3, 4, 5}, []float64{0, 0, 0, 0, 0}, 10); got != 30 {
		t.Fatalf("stopped after the first four: %v, want 1+4+9+16 = 30", got)
	}
}
