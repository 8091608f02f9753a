package serving

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/recsys-engine/recsys/recsys"
)

// fourItems is the hand-worked MMR example: items 0–3 (A–D) ranked with
// scores 4, 3, 2, 0, so rel = 1, 0.75, 0.5, 0 after min–max
// normalisation, and the symmetric similarities below.
var fourItems = []Candidate{{0, 4}, {1, 3}, {2, 2}, {3, 0}}

var fourSim = map[[2]uint32]float64{
	{0, 1}: 0.9, {0, 2}: 0.2, {0, 3}: 0,
	{1, 2}: 0.1, {1, 3}: 0.3, {2, 3}: 0.5,
}

// pairSimilarity adapts a similarity of item pairs to Diversify's.
func pairSimilarity(s map[[2]uint32]float64) func([]Candidate) func(a, b int) float64 {
	return func(pool []Candidate) func(a, b int) float64 {
		return func(a, b int) float64 {
			i, j := pool[a].Item, pool[b].Item
			return s[[2]uint32{min(i, j), max(i, j)}]
		}
	}
}

func items(cs []Candidate) []uint32 {
	out := make([]uint32, len(cs))
	for k, c := range cs {
		out[k] = c.Item
	}
	return out
}

// TestDiversify_mmrHandComputed checks the picks of argmax λ·rel −
// (1−λ)·max sim, worked by hand:
//
//	λ = 0.5: A (0.5 > 0.375 > 0.25 > 0); then B 0.375−0.45 = −0.075,
//	  C 0.25−0.1 = 0.15, D 0 → C; then B −0.075 (max sim 0.9), D 0−0.25
//	  (max sim 0.5) → B; then D.  A C B D.
//	λ = 0.8: A; B 0.6−0.18 = 0.42, C 0.4−0.04 = 0.36, D 0 → B; then C
//	  0.4−0.04 = 0.36, D −0.06 → C; D.  A B C D.
//	λ = 0: all tie at 0, the first ranked wins: A; B −0.9, C −0.2, D 0
//	  → D; B −0.9, C −0.5 → C; B.  A D C B.
//	λ = 1: the model's order.
func TestDiversify_mmrHandComputed(t *testing.T) {
	for _, tc := range []struct {
		lambda float64
		n      int
		want   []uint32
	}{
		{0.5, 4, []uint32{0, 2, 1, 3}},
		{0.5, 2, []uint32{0, 2}},
		{0.8, 4, []uint32{0, 1, 2, 3}},
		{0, 4, []uint32{0, 3, 2, 1}},
		{1, 4, []uint32{0, 1, 2, 3}},
		{0.5, 10, []uint32{0, 2, 1, 3}},
	} {
		t.Run(fmt.Sprintf("lambda=%v,n=%d", tc.lambda, tc.n), func(t *testing.T) {
			got := Diversify(fourItems, DiversifyOptions{N: tc.n, MMR: true, Lambda: tc.lambda, Similarity: pairSimilarity(fourSim)})
			if !slices.Equal(items(got), tc.want) {
				t.Fatalf("got %v, want %v", items(got), tc.want)
			}
			for _, c := range got {
				if c.Score != fourItems[c.Item].Score {
					t.Fatalf("item %d has score %v, want its model score %v", c.Item, c.Score, fourItems[c.Item].Score)
				}
			}
		})
	}
}

// TestDiversify_relevanceIsNormalised: relevance is min–max normalised
// over the pool, so scaling or shifting the scores changes no pick,
// while raw scores 100 times larger would swamp the similarities.
func TestDiversify_relevanceIsNormalised(t *testing.T) {
	scaled := make([]Candidate, len(fourItems))
	for k, c := range fourItems {
		scaled[k] = Candidate{c.Item, 100*c.Score - 7}
	}
	got := Diversify(scaled, DiversifyOptions{N: 4, MMR: true, Lambda: 0.5, Similarity: pairSimilarity(fourSim)})
	if want := []uint32{0, 2, 1, 3}; !slices.Equal(items(got), want) {
		t.Fatalf("scaled scores: got %v, want %v as unscaled", items(got), want)
	}
	// Equal scores: rel is 1 for all, and λ=0.5 weighs only similarity.
	flat := []Candidate{{0, 2}, {1, 2}, {2, 2}, {3, 2}}
	got = Diversify(flat, DiversifyOptions{N: 4, MMR: true, Lambda: 0.5, Similarity: pairSimilarity(fourSim)})
	if want := []uint32{0, 3, 2, 1}; !slices.Equal(items(got), want) {
		t.Fatalf("equal scores: got %v, want %v", items(got), want)
	}
}

// TestDiversify_pool: MMR reorders only the pool; the rest follow in
// the model's order. Pool 3, λ = 0: A; then B −0.9, C −0.2 → C; B; D.
func TestDiversify_pool(t *testing.T) {
	got := Diversify(fourItems, DiversifyOptions{N: 4, MMR: true, Lambda: 0, Pool: 3, Similarity: pairSimilarity(fourSim)})
	if want := []uint32{0, 2, 1, 3}; !slices.Equal(items(got), want) {
		t.Fatalf("got %v, want %v", items(got), want)
	}
	// No similarity: every pair 0, the model's order at any λ.
	got = Diversify(fourItems, DiversifyOptions{N: 4, MMR: true, Lambda: 0})
	if want := []uint32{0, 1, 2, 3}; !slices.Equal(items(got), want) {
		t.Fatalf("no similarity: got %v, want %v", items(got), want)
	}
}

// catsOf is a category function over a table.
func catsOf(table map[uint32][]string) func(uint32) []string {
	return func(i uint32) []string { return table[i] }
}

func ranked(n int) []Candidate {
	out := make([]Candidate, n)
	for k := range out {
		out[k] = Candidate{uint32(k), float64(n - k)}
	}
	return out
}

// TestDiversify_categoryCap: an item counts toward each of its
// categories, one without categories toward none, a category listed
// twice once.
func TestDiversify_categoryCap(t *testing.T) {
	cats := catsOf(map[uint32][]string{
		0: {"x"}, 1: {"x", "y"}, 2: {"y"}, 3: nil, 4: {"x"}, 5: {"y", "z"}, 6: {"z"}, 7: {"w", "w"}, 8: {"w"},
	})
	for _, tc := range []struct {
		k, n int
		want []uint32
	}{
		// x: 0; 1 has x full; y: 2; 3 free; 4 x full; 5 y full; z: 6; w: 7 (once); 8 w full.
		{1, 10, []uint32{0, 2, 3, 6, 7}},
		// x: 0, 1 (y 1); y: 2 (y 2); 3; 4 x full; 5 y full; z: 6; w: 7, 8.
		{2, 10, []uint32{0, 1, 2, 3, 6, 7, 8}},
		{2, 3, []uint32{0, 1, 2}},
		{5, 10, []uint32{0, 1, 2, 3, 4, 5, 6, 7, 8}},
	} {
		got := Diversify(ranked(9), DiversifyOptions{N: tc.n, MaxPerCategory: tc.k, Categories: cats})
		if !slices.Equal(items(got), tc.want) {
			t.Errorf("K=%d, n=%d: got %v, want %v", tc.k, tc.n, items(got), tc.want)
		}
	}
}

// TestDiversify_capWithMMR: a capped item is never placed. Categories A
// x, B y, C x, D y, K = 1, λ = 0.5: A; C is capped (x), B −0.075, D 0 →
// D; B is capped (y).
func TestDiversify_capWithMMR(t *testing.T) {
	cats := catsOf(map[uint32][]string{0: {"x"}, 1: {"y"}, 2: {"x"}, 3: {"y"}})
	got := Diversify(fourItems, DiversifyOptions{N: 4, MMR: true, Lambda: 0.5, MaxPerCategory: 1, Categories: cats, Similarity: pairSimilarity(fourSim)})
	if want := []uint32{0, 3}; !slices.Equal(items(got), want) {
		t.Fatalf("got %v, want %v", items(got), want)
	}
}

// TestDiversify_prefixStable: for random rankings, categories and
// similarities, the list for n is the first n of the list for any
// larger n, and of the list from a longer ranking with the same start
// (whose extra candidates are all past the pool).
func TestDiversify_prefixStable(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		m := 5 + rng.IntN(40)
		list := make([]Candidate, m)
		table := map[uint32][]string{}
		sims := map[[2]uint32]float64{}
		score := 100.0
		for k := range list {
			score -= rng.Float64()
			list[k] = Candidate{uint32(k), score}
			for range rng.IntN(3) {
				table[uint32(k)] = append(table[uint32(k)], string(rune('a'+rng.IntN(4))))
			}
			for j := range k {
				sims[[2]uint32{uint32(j), uint32(k)}] = rng.Float64()
			}
		}
		pool := 1 + rng.IntN(m)
		o := DiversifyOptions{MaxPerCategory: 1 + rng.IntN(3), Categories: catsOf(table), MMR: rng.IntN(2) == 0,
			Lambda: rng.Float64(), Pool: pool, Similarity: pairSimilarity(sims)}
		o.N = m
		full := Diversify(list, o)
		for n := 1; n <= m; n++ {
			o.N = n
			got := Diversify(list, o)
			if want := full[:min(n, len(full))]; !slices.Equal(got, want) {
				t.Fatalf("trial %d n=%d: %v, want the prefix %v", trial, n, items(got), items(want))
			}
			if short := list[:max(pool, n)]; len(short) < len(list) {
				got := Diversify(short, o)
				if want := full[:min(n, len(full))]; len(got) == n && !slices.Equal(got, want) {
					t.Fatalf("trial %d n=%d from %d candidates: %v, want %v", trial, n, len(short), items(got), items(want))
				}
			}
		}
	}
}

// TestDiversified_fetchesMore: the cap leaves a list short, so more
// candidates are asked for, four times as many each time, until the list
// is full or the ranking ends.
func TestDiversified_fetchesMore(t *testing.T) {
	table := map[uint32][]string{}
	for i := range uint32(10) {
		table[i] = []string{"x"}
	}
	table[10], table[11] = []string{"y"}, []string{"z"}
	all := ranked(20)
	var asked []int
	fetch := func(k int) ([]Candidate, error) {
		asked = append(asked, k)
		return all[:min(k, len(all))], nil
	}
	o := DiversifyOptions{N: 3, MaxPerCategory: 1, Categories: catsOf(table)}
	got, err := diversified(o, len(all), fetch)
	if err != nil {
		t.Fatal(err)
	}
	if want := []uint32{0, 10, 11}; !slices.Equal(items(got), want) || !slices.Equal(asked, []int{3, 12}) {
		t.Fatalf("got %v after asking %v, want %v after asking [3 12]", items(got), asked, want)
	}
	// Five items: 0, 10, 11 and two without categories, from the whole
	// ranking (3 → 12 leaves 3 items, then 20, the catalogue).
	asked = nil
	o.N = 5
	got, _ = diversified(o, len(all), fetch)
	if want := []uint32{0, 10, 11, 12, 13}; !slices.Equal(items(got), want) || !slices.Equal(asked, []int{5, 20}) {
		t.Fatalf("got %v after asking %v, want %v after asking [5 20]", items(got), asked, want)
	}
	// The catalogue cannot fill it: all it allows, and no endless asking.
	asked = nil
	o.N, o.MaxPerCategory = 5, 1
	only := all[:11]
	got, _ = diversified(o, 50, func(k int) ([]Candidate, error) { asked = append(asked, k); return only[:min(k, len(only))], nil })
	if want := []uint32{0, 10}; !slices.Equal(items(got), want) || !slices.Equal(asked, []int{5, 20}) {
		t.Fatalf("short ranking: got %v after asking %v, want %v after asking [5 20]", items(got), asked, want)
	}
	// MMR asks for the pool at once.
	asked = nil
	_, _ = diversified(DiversifyOptions{N: 3, MMR: true, Lambda: 0.5}, 1000, fetch)
	if !slices.Equal(asked, []int{DiversityPool}) {
		t.Fatalf("MMR asked %v, want [%d]", asked, DiversityPool)
	}
}

// lists is an ItemNeighbourhood over fixed lists.
type lists map[uint32][]recsys.Neighbour

func (l lists) Similar(i uint32) []recsys.Neighbour { return l[i] }

// denseLists is an ItemNeighbourhood held as the models hold theirs, by
// dense index.
type denseLists [][]recsys.Neighbour

func (l denseLists) Similar(i uint32) []recsys.Neighbour { return l[i] }

// TestNeighbourSimilarity: a neighbour's affinity over the list's first,
// the larger of the two directions, 0 when neither lists the other;
// items outside the pool are not read.
func TestNeighbourSimilarity(t *testing.T) {
	nb := lists{
		0: {{Index: 1, Value: 0.8}, {Index: 9, Value: 0.6}, {Index: 2, Value: 0.4}},
		1: {{Index: 0, Value: 0.5}, {Index: 3, Value: 0.25}},
		3: {{Index: 2, Value: 2}, {Index: 0, Value: 0.5}},
		9: {{Index: 1, Value: 9}},
	}
	pool := []Candidate{{3, 0}, {0, 0}, {1, 0}, {2, 0}} // positions of items 3, 0, 1, 2
	sim := neighbourSimilarity(nb, 10)(pool)
	pos := map[uint32]int{3: 0, 0: 1, 1: 2, 2: 3}
	for _, tc := range []struct {
		i, j uint32
		want float64
	}{
		{0, 1, 1},    // 0.8/0.8 and 0.5/0.5
		{0, 2, 0.5},  // 0.4/0.8; 2 lists nothing
		{1, 3, 0.5},  // 0.25/0.5
		{2, 3, 1},    // 2/2
		{0, 3, 0.25}, // 0.5/2 from 3's list; 0 does not list 3
		{1, 2, 0},
	} {
		for _, p := range [][2]uint32{{tc.i, tc.j}, {tc.j, tc.i}} {
			if got := sim(pos[p[0]], pos[p[1]]); math.Abs(got-tc.want) > 1e-7 {
				t.Errorf("sim(%d, %d) = %v, want %v", p[0], p[1], got, tc.want)
			}
		}
	}
	// The position buffer is left all −1 for the next request.
	bufp := positions.Get().(*[]int32)
	defer positions.Put(bufp)
	for i, p := range *bufp {
		if p != -1 {
			t.Fatalf("position %d left at %d", i, p)
		}
	}
}

// BenchmarkDiversify is the cost of diversifying a top 10 from 200
// candidates with categories like MovieLens genres (one to three of 19)
// and item neighbour lists of 50: the category cap alone, MMR alone,
// and both.
func BenchmarkDiversify(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	const items, k = 2000, 50
	cats := make([][]string, items)
	nb := make(denseLists, items)
	for i := range uint32(items) {
		for range 1 + rng.IntN(3) {
			cats[i] = append(cats[i], fmt.Sprintf("genre%d", rng.IntN(19)))
		}
		l := make([]recsys.Neighbour, k)
		v := 1.0
		for x := range l {
			v *= 0.97
			l[x] = recsys.Neighbour{Index: uint32(rng.IntN(items)), Value: v}
		}
		nb[i] = l
	}
	list := make([]Candidate, DiversityPool)
	for x := range list {
		list[x] = Candidate{uint32(rng.IntN(items)), float64(len(list) - x)}
	}
	categories := func(i uint32) []string { return cats[i] }
	for _, bc := range []struct {
		name string
		o    DiversifyOptions
	}{
		{"cap3", DiversifyOptions{N: 10, MaxPerCategory: 3, Categories: categories}},
		{"mmr", DiversifyOptions{N: 10, MMR: true, Lambda: 0.7, Similarity: neighbourSimilarity(nb, items)}},
		{"cap3+mmr", DiversifyOptions{N: 10, MaxPerCategory: 3, Categories: categories, MMR: true, Lambda: 0.7, Similarity: neighbourSimilarity(nb, items)}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if got := Diversify(list, bc.o); len(got) != 10 {
					b.Fatalf("%d items, want 10", len(got))
				}
			}
		})
	}
}
