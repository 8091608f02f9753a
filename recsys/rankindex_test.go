package recsys

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/recsys-engine/recsys/recsys/dataset"
	"github.com/recsys-engine/recsys/recsys/dataset/datasettest"
)

// fullTopN is the reference RankTop must equal: score every item, filter,
// select.
func fullTopN(m Model, history, pop []uint32, skip func(uint32) bool, n int, scores []float64) []uint32 {
	m.Score(history, scores)
	for i := range scores {
		if skip(uint32(i)) {
			scores[i] = math.Inf(-1)
		}
	}
	return TopN(scores, pop, nil, n)
}

// TestRankTop_sameAsFullScoring: for every item-based model and popular, RankTop gives
// the same items in the same order with bit-identical scores as scoring
// the whole catalogue, over users, list lengths (past the catalogue too),
// filters, histories with unknown and repeated items, a catalogue larger
// than the model, data whose scores tie, and a wide catalogue whose
// queries reach few items (rankIndex.sparseTop).
func TestRankTop_sameAsFullScoring(t *testing.T) {
	skewed := generated(t, 5, 600, 700, 40)
	ties, _ := randomMatrix(t, 6, 60, 300, 0.03) // few co-occurrences: many equal scores
	wide := generated(t, 7, 300, 20000, 30)      // short rows on a wide catalogue: the sparse path
	negatives := 0                               // the sparse EASE's weights below 0
	defer func() { mustNegative(t, negatives) }()
	for _, data := range []struct {
		name string
		x    *Matrix
	}{{"skewed", skewed}, {"ties", ties}, {"wide", wide}} {
		for _, k := range []int{5, 50} {
			m, neg := sparseEASE(t, data.x, k)
			negatives += neg
			t.Run(fmt.Sprintf("%s/ease/k=%d", data.name, k), func(t *testing.T) {
				checkRankTop(t, m, m, data.x)
			})
		}
		for _, name := range []string{"itemknn", "kunn-i", "slim", "popular"} {
			for _, k := range []int{5, 50} {
				m, err := New(name)
				if err != nil {
					t.Fatal(err)
				}
				if err := m.Fit(context.Background(), data.x, Params{K: k}); err != nil {
					t.Fatal(err)
				}
				r, ok := m.(TopRanker)
				if !ok {
					t.Fatalf("%s does not implement TopRanker", name)
				}
				t.Run(fmt.Sprintf("%s/%s/k=%d", data.name, name, k), func(t *testing.T) {
					checkRankTop(t, m, r, data.x)
				})
			}
		}
	}
}

func checkRankTop(t *testing.T, m Model, r TopRanker, x *Matrix) {
	rng := rand.New(rand.NewPCG(9, 10))
	pop := x.Popularity()
	for u := 0; u < x.Users(); u += 7 {
		history := slices.Clone(x.Row(u))
		if u%3 == 0 {
			// an item the model never saw, and a repeat
			history = append(history, uint32(x.Items()+2))
			if len(history) > 1 {
				history = append(history[:1], history...)
			}
			slices.Sort(history)
		}
		catalogue := x.Items()
		if u%2 == 0 {
			catalogue += 5 // items added since the fit score 0
		}
		hidden := rng.IntN(5) + 2
		skip := func(i uint32) bool {
			_, consumed := slices.BinarySearch(history, i)
			return consumed || int(i)%hidden == 0
		}
		if u%11 == 0 {
			skip = func(uint32) bool { return false }
		}
		for _, n := range []int{1, 10, 100, catalogue + 3} {
			want := make([]float64, catalogue)
			wantTop := fullTopN(m, history, pop, skip, n, want)
			got := make([]float64, catalogue)
			for i := range got {
				got[i] = math.NaN() // RankTop must set what it returns
			}
			gotTop := r.RankTop(history, pop, skip, n, got)
			if !slices.Equal(gotTop, wantTop) {
				t.Fatalf("user %d, n %d: items %v, want %v", u, n, head(gotTop), head(wantTop))
			}
			for _, i := range gotTop {
				if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
					t.Fatalf("user %d, n %d: item %d scores %v, want %v", u, n, i, got[i], want[i])
				}
			}
		}
	}
}

func head(l []uint32) []uint32 { return l[:min(len(l), 12)] }

// TestRankIndex_bound: the bound of a block is at least the score of each
// of its items for a history (the pruning's premise), on skewed data, for
// itemknn's cosines and for the sparse EASE's weights, some negative.
func TestRankIndex_bound(t *testing.T) {
	x := generated(t, 8, 400, 500, 30)
	knn := fitted(t, "itemknn", x, Params{K: 40}).(*ItemP)
	t.Run("itemknn", func(t *testing.T) { checkRankBounds(t, x, knn, knn.side.rank) })
	ease, neg := sparseEASE(t, x, 40)
	mustNegative(t, neg)
	t.Run("ease", func(t *testing.T) { checkRankBounds(t, x, ease, ease.side.rank) })
}

// sparseEASE fits the sparse EASE at k on x and counts its negative
// weights.
func sparseEASE(t *testing.T, x *Matrix, k int) (*EASE, int) {
	t.Helper()
	t.Setenv(EnvEASEMaxDense, "0")
	m := fitted(t, "ease", x, Params{K: k}).(*EASE)
	if m.side == nil || m.side.rank == nil {
		t.Fatal("the sparse EASE has no ranked item side")
	}
	neg := 0
	for i := range m.side.fwd.Rows() {
		for _, e := range m.side.fwd.Row(i) {
			if e.Value < 0 {
				neg++
			}
		}
	}
	return m, neg
}

// mustNegative fails t when a test meant to cover negative weights has none.
func mustNegative(t *testing.T, neg int) {
	t.Helper()
	if neg == 0 {
		t.Fatal("no negative EASE weight: the test would not cover them")
	}
}

func checkRankBounds(t *testing.T, x *Matrix, m Model, ri *rankIndex) {
	scores := make([]float64, x.Items())
	for u := 0; u < x.Users(); u += 5 {
		h := x.Row(u)
		m.Score(h, scores)
		// the bound of the exact maxima, and the bounds as topN computes
		// them (rangeBounds, over all blocks and over two ranges), checked
		// item by item
		bounds := make([]float64, ri.nBlocks())
		for _, j := range h {
			best := make(map[uint32]float64)
			for _, e := range ri.row(j) {
				best[uint32(ri.block(e.pos))] = max(best[uint32(ri.block(e.pos))], e.value)
			}
			for b, v := range best {
				bounds[b] += v
			}
		}
		sc := ri.pool.Get().(*rankScratch)
		sc.hist = append(sc.hist[:0], h...)
		computed := make([]float64, ri.nBlocks())
		for _, bb := range ri.rangeBounds(sc, 0, ri.nBlocks(), nil) {
			computed[bb.b] = bb.ub
		}
		from := u % ri.nBlocks()
		split := ri.rangeBounds(sc, from, ri.nBlocks(), ri.rangeBounds(sc, 0, from, nil))
		ri.pool.Put(sc)
		if len(split) != ri.nBlocks() {
			t.Fatalf("user %d: rangeBounds over two ranges gives %d blocks, want %d", u, len(split), ri.nBlocks())
		}
		for k, bb := range split {
			if bb.ub != computed[bb.b] || (k > 0 && split[k-1].ub > bb.ub) {
				t.Fatalf("user %d: rangeBounds split at %d gives block %d bound %v (position %d), %v in one range", u, from, bb.b, bb.ub, k, computed[bb.b])
			}
		}
		for i, s := range scores {
			b := ri.block(ri.pos[i])
			if s > min(bounds[b], ri.bound[b]) {
				t.Fatalf("user %d: item %d scores %v above its block's bound %v (row-sum bound %v)", u, i, s, bounds[b], ri.bound[b])
			}
			if s > computed[b] {
				t.Fatalf("user %d: item %d scores %v above its block's computed bound %v", u, i, s, computed[b])
			}
		}
		// the static bounds do not increase: the lazy order relies on it
		for b := 1; b < len(ri.bound); b++ {
			if ri.bound[b] > ri.bound[b-1] {
				t.Fatalf("static bound of block %d (%v) above block %d's (%v)", b, ri.bound[b], b-1, ri.bound[b-1])
			}
		}
	}
}

// TestRankTop_negativeWeights: items whose lists hold large negative
// weights beside small positive ones (their signed row sums far below what
// a history without the negative items scores) are ranked as the full
// scoring ranks them: the static bounds and the order of the blocks follow
// the positive entries.
func TestRankTop_negativeWeights(t *testing.T) {
	x := generated(t, 12, 300, 400, 25)
	rng := rand.New(rand.NewPCG(12, 1))
	rows := make([][]Neighbour, x.Items())
	for i := range rows {
		for _, j := range rng.Perm(x.Items())[:12] {
			v := rng.Float64()
			if j%3 == 0 {
				v = -10 * (1 + rng.Float64())
			}
			rows[i] = append(rows[i], Neighbour{Index: uint32(j), Value: v})
		}
		slices.SortFunc(rows[i], CompareNeighbours)
	}
	m := &EASE{lambda: 1, k: 12, nItems: x.Items(), side: newRankedItemSide(x.Items(), fromRows(rows))}
	checkRankTop(t, m, m, x)
}

// TestRankTop_sameAsFullScoring_ml100k is TestRankTop_sameAsFullScoring on
// the positives of MovieLens 100K (../shared/datasets/ml-100k), k = 50:
// real co-occurrences, where bounds and row sums do not line up as in
// generated data.
func TestRankTop_sameAsFullScoring_ml100k(t *testing.T) {
	path := filepath.Join("..", "..", "shared", "datasets", "ml-100k")
	datasettest.Require(t, path)
	pos, err := dataset.Positives("movielens", path, nil)
	if err != nil {
		t.Fatal(err)
	}
	pairs := make([]Pair, len(pos.Users))
	for n := range pairs {
		pairs[n] = Pair{User: pos.Users[n], Item: pos.Items[n]}
	}
	x, err := NewMatrix(len(pos.UserIDs), len(pos.ItemIDs), pairs)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"itemknn", "kunn-i", "slim"} {
		m, _ := New(name)
		if err := m.Fit(context.Background(), x, Params{K: 50}); err != nil {
			t.Fatal(err)
		}
		t.Run(name, func(t *testing.T) { checkRankTop(t, m, m.(TopRanker), x) })
	}
	ease, neg := sparseEASE(t, x, 50)
	mustNegative(t, neg)
	t.Run("ease", func(t *testing.T) { checkRankTop(t, ease, ease, x) })
}

// TestRankTop_lateBlock: the answer lies past the first rankLead blocks,
// whose items have the largest row sums but almost none of it on the
// history, so their bounds are small and the first of them sets a
// threshold above the others; the next block's static bound must still
// make topN compute the later bounds, and find the item there.
func TestRankTop_lateBlock(t *testing.T) {
	const n, eps = 700, 0.001
	rows := make([][]Neighbour, n)
	// Items 0..599 (blocks 0..9 by row sum ≈ 1) score 10ε on the history
	// 690..699, item 0 11ε (the first threshold); item 650 scores 0.8, its
	// whole row sum. The history's rows are long enough (6,008 entries)
	// that the first block fits the one-pass budget.
	for i := range 600 {
		rows[i] = []Neighbour{{Index: uint32(600 + i%50), Value: 1}}
		for j := 690; j < 700; j++ {
			rows[i] = append(rows[i], Neighbour{Index: uint32(j), Value: eps})
		}
	}
	rows[0][1].Value = 2 * eps
	for j := 692; j < 700; j++ {
		rows[650] = append(rows[650], Neighbour{Index: uint32(j), Value: 0.1})
	}
	for _, r := range rows {
		slices.SortFunc(r, CompareNeighbours)
	}
	m := &ItemP{name: "itemknn", side: newRankedItemSide(n, fromRows(rows))}
	ri := m.side.rank
	if b := ri.block(ri.pos[650]); b < rankLead {
		t.Fatalf("item 650 is in block %d, want one past the first %d", b, rankLead)
	}
	history := []uint32{690, 691, 692, 693, 694, 695, 696, 697, 698, 699}
	pop := make([]uint32, n)
	skip := func(i uint32) bool { return false }
	want := make([]float64, n)
	wantTop := fullTopN(m, history, pop, skip, 1, want)
	if !slices.Equal(wantTop, []uint32{650}) {
		t.Fatalf("full scoring gives %v, want [650]", wantTop)
	}
	got := make([]float64, n)
	if top := m.RankTop(history, pop, skip, 1, got); !slices.Equal(top, wantTop) || got[650] != want[650] {
		t.Fatalf("RankTop gives %v (score %v), want %v (score %v)", top, got[top[0]], wantTop, want[650])
	}
}

// TestRankTop_signedPruning: a large catalogue whose items list a few
// "hub" items with signed weights (some large, some histories weighing
// only negatively): the reversed rows are long, so topN takes its pruning
// path (scoreBlock, lazy bounds, early stop) rather than the one-pass
// fallback the fitted EASE cases reach, and answers as the full scoring.
func TestRankTop_signedPruning(t *testing.T) {
	const nItems, hubs = 6000, 60
	for _, mode := range []string{"mixed", "allNegativeHistory", "mostlyNegative", "hugeNegatives"} {
		rng := rand.New(rand.NewPCG(77, uint64(len(mode))))
		rows := make([][]Neighbour, nItems)
		for i := hubs; i < nItems; i++ {
			scale := 1 / (1 + float64(i)/300) // row sums fall with i
			for _, j := range rng.Perm(hubs)[:20] {
				v := scale * rng.Float64()
				switch mode {
				case "mixed":
					if rng.IntN(3) == 0 {
						v = -v * 3
					}
				case "allNegativeHistory":
					if j < 10 {
						v = -v - 0.01 // hubs 0..9 only ever weigh negatively
					}
				case "mostlyNegative":
					if rng.IntN(5) > 0 {
						v = -v
					}
				case "hugeNegatives":
					if rng.IntN(4) == 0 {
						v = -1e6 * (1 + rng.Float64())
					}
				}
				rows[i] = append(rows[i], Neighbour{Index: uint32(j), Value: v})
			}
			slices.SortFunc(rows[i], CompareNeighbours)
		}
		m := &EASE{lambda: 1, k: 20, nItems: nItems, side: newRankedItemSide(nItems, fromRows(rows))}
		pop := make([]uint32, nItems)
		for i := range pop {
			pop[i] = uint32(rng.IntN(3))
		}
		queries, pruned := 0, 0
		for q := range 300 {
			var h []uint32
			if mode == "allNegativeHistory" {
				h = []uint32{uint32(rng.IntN(10)), uint32(rng.IntN(10))}
			} else {
				for range 1 + rng.IntN(6) {
					h = append(h, uint32(rng.IntN(hubs)))
				}
			}
			slices.Sort(h)
			catalogue := nItems + (q%2)*4
			hidden := 2 + q%5
			skip := func(i uint32) bool { return int(i)%hidden == 0 && q%3 == 0 }
			for _, n := range []int{1, 5, 20, 300} {
				want := make([]float64, catalogue)
				wantTop := fullTopN(m, h, pop, skip, n, want)
				got := make([]float64, catalogue)
				for i := range got {
					got[i] = math.NaN()
				}
				gotTop := m.RankTop(h, pop, skip, n, got)
				queries++
				if slices.ContainsFunc(got[:nItems], math.IsNaN) {
					pruned++ // some item never scored: the pruning path
				}
				if !slices.Equal(gotTop, wantTop) {
					t.Fatalf("%s: history %v n %d: %v, want %v", mode, h, n, head(gotTop), head(wantTop))
				}
				for _, i := range gotTop {
					if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
						t.Fatalf("%s: item %d scores %v, want %v", mode, i, got[i], want[i])
					}
				}
				if mode == "allNegativeHistory" && n == 1 && want[wantTop[0]] > 0 && catalogue == nItems {
					t.Fatalf("expected a non-positive best score")
				}
			}
		}
		t.Logf("%s: %d queries, %d left some item unscored", mode, queries, pruned)
		if mode == "mixed" && pruned == 0 {
			t.Fatal("the pruning path was never taken")
		}
	}
}

// TestRankIndex_staticBoundsNonIncreasing: an item with a large negative
// weight placed after (by positive row sum) items without one leaves the
// static bounds non-increasing, as the lazy order of blocks needs, and the
// answers the full scoring's.
func TestRankIndex_staticBoundsNonIncreasing(t *testing.T) {
	const n = 200
	rows := make([][]Neighbour, n)
	for i := range 64 { // block 0: positive row sum 1, no negative entry
		rows[i] = []Neighbour{{Index: 199, Value: 1}}
	}
	for i := 64; i < 128; i++ { // block 1: row sum just below 1, a large negative entry
		rows[i] = []Neighbour{{Index: 199, Value: 0.99999999}, {Index: 198, Value: -1000}}
	}
	ri := newRankIndex(n, fromRows(rows))
	for b := 1; b < len(ri.bound); b++ {
		if ri.bound[b] > ri.bound[b-1] {
			t.Errorf("static bound of block %d (%.17g) above block %d's (%.17g)", b, ri.bound[b], b-1, ri.bound[b-1])
		}
	}
	// The answers are still the full scoring's.
	m := &EASE{lambda: 1, k: 2, nItems: n, side: &itemSide{nItems: n, fwd: fromRows(rows), rank: ri}}
	pop := make([]uint32, n)
	for _, h := range [][]uint32{{199}, {198}, {198, 199}} {
		for _, k := range []int{1, 64, 65, 130} {
			want := make([]float64, n)
			wantTop := fullTopN(m, h, pop, func(uint32) bool { return false }, k, want)
			got := make([]float64, n)
			if gotTop := m.RankTop(h, pop, func(uint32) bool { return false }, k, got); !slices.Equal(gotTop, wantTop) {
				t.Fatalf("history %v n %d: %v, want %v", h, k, head(gotTop), head(wantTop))
			}
		}
	}
}

// AsTopRanker: the item-based models and the sparse EASE rank from their
// index; the dense EASE and the models without RankTop score every item.
func TestAsTopRanker(t *testing.T) {
	x := generated(t, 13, 120, 90, 10)
	for _, c := range []struct {
		name  string
		m     Model
		ranks bool
	}{
		{"itemknn", fitted(t, "itemknn", x, Params{K: 10}), true},
		{"ease dense", fitted(t, "ease", x, Params{K: 10}), false},
		{"rp3beta", fitted(t, "rp3beta", x, Params{K: 10}), false},
	} {
		if _, ok := AsTopRanker(c.m); ok != c.ranks {
			t.Errorf("%s: AsTopRanker %v, want %v", c.name, ok, c.ranks)
		}
	}
	sparse, _ := sparseEASE(t, x, 10)
	if _, ok := AsTopRanker(sparse); !ok {
		t.Error("the sparse EASE is not a TopRanker")
	}
}
