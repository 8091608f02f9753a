package recsys

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestTopN_tiesByPopularityThenIndex(t *testing.T) {
	scores := []float64{1, 3, 3, 3, 2, 3, math.NaN(), 5}
	pop := []uint32{9, 1, 4, 4, 0, 2, 9, 0}
	exclude := []uint32{7}
	// Item 7 is excluded and 6 filtered; 2 and 3 tie on score and
	// popularity, so the index decides; then 5 (pop 2), 1 (pop 1), 4, 0.
	got := TopN(scores, pop, exclude, 10)
	want := []uint32{2, 3, 5, 1, 4, 0}
	if !slices.Equal(got, want) {
		t.Fatalf("TopN = %v, want %v", got, want)
	}
	if got := TopN(scores, pop, exclude, 2); !slices.Equal(got, want[:2]) {
		t.Fatalf("TopN(2) = %v, want %v", got, want[:2])
	}
	if got := TopN(scores, nil, nil, 3); !slices.Equal(got, []uint32{7, 1, 2}) {
		t.Fatalf("TopN without popularity = %v", got)
	}
}

// fullOrder sorts every non-excluded item with the ranking order.
func fullOrder(scores []float64, pop []uint32, exclude []uint32) []uint32 {
	var all []uint32
	for i := range scores {
		if !slices.Contains(exclude, uint32(i)) {
			all = append(all, uint32(i))
		}
	}
	slices.SortFunc(all, func(a, b uint32) int {
		switch {
		case scores[a] != scores[b]:
			if scores[a] > scores[b] {
				return -1
			}
			return 1
		case pop[a] != pop[b]:
			if pop[a] > pop[b] {
				return -1
			}
			return 1
		}
		return int(a) - int(b)
	})
	return all
}

// tiedScores draws n scores among levels whole values (many ties) and n
// popularities below pops, item by item.
func tiedScores(rng *rand.Rand, n, levels, pops int) ([]float64, []uint32) {
	scores, pop := make([]float64, n), make([]uint32, n)
	for i := range scores {
		scores[i] = float64(rng.IntN(levels))
		pop[i] = uint32(rng.IntN(pops))
	}
	return scores, pop
}

func TestTopN_matchesFullSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 50 {
		n := 1 + rng.IntN(200)
		scores, pop := tiedScores(rng, n, 5, 4)
		var exclude []uint32
		for i := range n {
			if rng.IntN(5) == 0 {
				exclude = append(exclude, uint32(i))
			}
		}
		all := fullOrder(scores, pop, exclude)
		k := rng.IntN(n + 3)
		if got, want := TopN(scores, pop, exclude, k), all[:min(k, len(all))]; !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Fatalf("TopN(%d) = %v, want %v", k, got, want)
		}
	}
}

// Filtered items (NaN and −Inf) anywhere, before and after the kept list
// fills, never enter it, and an exclusion list longer than the catalogue's
// tail is honoured: TopN is the full sort of the unfiltered items.
func TestTopN_filteredAnywhere(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 200 {
		n := 1 + rng.IntN(120)
		scores, pop := tiedScores(rng, n, 6, 3)
		var exclude, kept []uint32
		for i := range n {
			switch rng.IntN(6) {
			case 0:
				scores[i] = math.NaN()
			case 1:
				scores[i] = math.Inf(-1)
			case 2:
				exclude = append(exclude, uint32(i))
			default:
				kept = append(kept, uint32(i))
			}
		}
		exclude = append(exclude, uint32(n), uint32(n+5)) // past the catalogue
		// The full sort of the kept items alone (NaN cannot be sorted).
		var dropped []uint32
		for i := range n {
			if !slices.Contains(kept, uint32(i)) {
				dropped = append(dropped, uint32(i))
			}
		}
		all := fullOrder(scores, pop, dropped)
		for _, k := range []int{1, 3, 10, n} {
			if got, want := TopN(scores, pop, exclude, k), all[:min(k, len(all))]; !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
				t.Fatalf("n %d: TopN(%d) = %v, want %v (scores %v)", n, k, got, want, scores)
			}
		}
	}
}

func TestRanks_handExample(t *testing.T) {
	// Items 0..5, item 4 in training. Order: 1 (score 4), then the tie at
	// score 2 between 0 (pop 5), 3 (pop 5) and 5 (pop 7): 5, 0, 3; then 2.
	scores := []float64{2, 4, 1, 2, 9, 2}
	pop := []uint32{5, 0, 0, 5, 0, 7}
	got := Ranks(scores, pop, []uint32{4}, []uint32{3, 1, 2})
	want := []int{3, 0, 4} // 3 after 1, 5, 0; 1 first; 2 last
	if !slices.Equal(got, want) {
		t.Fatalf("Ranks = %v, want %v", got, want)
	}
}

func TestRanks_matchFullSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 100 {
		n := 2 + rng.IntN(100)
		scores, pop := tiedScores(rng, n, 4, 3)
		exclude, rel := excludeAndRelevant(rng, n, false)
		all := fullOrder(scores, pop, exclude)
		got := Ranks(scores, pop, exclude, rel)
		fast := NewRanker(pop, n).Ranks(scores, exclude, rel)
		for k, i := range rel {
			if want := slices.Index(all, i); got[k] != want || fast[k] != want {
				t.Fatalf("rank of %d = %d (Ranker: %d), want %d", i, got[k], fast[k], want)
			}
		}
	}
}

// The hand example of TestRanks_handExample with item 2's score 0 and
// three more items at 0 that the history did not reach (6, 7, 8): the
// zero-scored items come after every positive one, by popularity.
func TestRanksSparse_handExample(t *testing.T) {
	// Order: 1 (4); 5, 0, 3 (2, by popularity 7, 5, 5); then the zeros
	// by popularity then index: 7 (pop 6), 2 (pop 3), 6 and 8 (pop 0).
	scores := []float64{2, 4, 0, 2, 9, 2, 99, 99, 99} // 6–8 untouched: their entries are not read
	pop := []uint32{5, 0, 3, 5, 0, 7, 0, 6, 0}
	touched := []uint32{5, 1, 0, 3, 4, 2}
	got := NewRanker(pop, 9).RanksSparse(scores, touched, []uint32{4}, []uint32{3, 2, 8, 1})
	want := []int{3, 5, 7, 0} // item 4 is excluded
	if !slices.Equal(got, want) {
		t.Fatalf("RanksSparse = %v, want %v", got, want)
	}
}

// RanksSparse gives the ranks of a full sort of the whole catalogue when
// the items outside touched score 0, with ties at 0 inside touched too,
// touched items excluded, relevant items untouched and repeats in the
// history.
func TestRanksSparse_matchFullSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for range 300 {
		n := 2 + rng.IntN(200)
		full, pop := tiedScores(rng, n, 4, 3)
		scores := make([]float64, n)
		var touched []uint32
		for _, i := range rng.Perm(n)[:rng.IntN(n)] {
			touched = append(touched, uint32(i))
			scores[i] = math.Abs(full[i]) * float64(rng.IntN(3)) // some touched items score 0
		}
		garbage := slices.Clone(scores)
		for i := range garbage {
			if !slices.Contains(touched, uint32(i)) {
				garbage[i] = rng.Float64() - 0.5 // RanksSparse reads touched entries only
			}
		}
		exclude, rel := excludeAndRelevant(rng, n, true)
		all := fullOrder(scores, pop, exclude)
		got := NewRanker(pop, n).RanksSparse(garbage, touched, exclude, rel)
		for k, i := range rel {
			if want := slices.Index(all, i); got[k] != want {
				t.Fatalf("n %d, %d touched: rank of %d = %d, want %d", n, len(touched), i, got[k], want)
			}
		}
	}
}

// excludeAndRelevant draws a sorted history to exclude (with a repeated
// item half the time when repeats is set) and at least one relevant item
// outside it, among n items.
func excludeAndRelevant(rng *rand.Rand, n int, repeats bool) (exclude, rel []uint32) {
	perm := rng.Perm(n)
	nEx, nRel := rng.IntN(n/2+1), 1+rng.IntN(n/2)
	for _, i := range perm[:nEx] {
		exclude = append(exclude, uint32(i))
	}
	if repeats && len(exclude) > 0 && rng.IntN(2) == 0 {
		exclude = append(exclude, exclude[rng.IntN(len(exclude))]) // a history may repeat an item
	}
	slices.Sort(exclude)
	for _, i := range perm[nEx:min(n, nEx+nRel)] {
		rel = append(rel, uint32(i))
	}
	return exclude, rel
}

func TestTopNKeep_asksOnlyEntrants(t *testing.T) {
	scores := []float64{1, 5, 3, 4, 2, 6}
	var asked []uint32
	keep := func(i uint32) bool {
		asked = append(asked, i)
		return i != 5
	}
	got := TopNKeep(scores, nil, []uint32{3}, keep, 2)
	if want := []uint32{1, 2}; !slices.Equal(got, want) {
		t.Errorf("TopNKeep = %v, want %v", got, want)
	}
	// 0 and 1 fill the heap; 2 (3 > 1) enters, 3 is excluded, 4 (2 < 3)
	// cannot enter, 5 (6) is asked and rejected.
	if want := []uint32{0, 1, 2, 5}; !slices.Equal(asked, want) {
		t.Errorf("keep asked of %v, want %v", asked, want)
	}
}
