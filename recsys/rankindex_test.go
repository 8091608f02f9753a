package recsys

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"recsys/recsys/dataset"
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

// TestRankTop_sameAsFullScoring: for every item-based model, RankTop gives
// the same items in the same order with bit-identical scores as scoring
// the whole catalogue, over users, list lengths (past the catalogue too),
// filters, histories with unknown and repeated items, a catalogue larger
// than the model, and data whose scores tie.
func TestRankTop_sameAsFullScoring(t *testing.T) {
	skewed := generated(t, 5, 600, 700, 40)
	ties, _ := randomMatrix(t, 6, 60, 300, 0.03) // few co-occurrences: many equal scores
	for _, data := range []struct {
		name string
		x    *Matrix
	}{{"skewed", skewed}, {"ties", ties}} {
		for _, name := range []string{"itemknn", "kunn-i", "slim"} {
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
// of its items for a history (the pruning's premise), on skewed data.
func TestRankIndex_bound(t *testing.T) {
	x := generated(t, 8, 400, 500, 30)
	m := &ItemP{name: "itemknn"}
	if err := m.Fit(context.Background(), x, Params{K: 40}); err != nil {
		t.Fatal(err)
	}
	ri := m.side.rank
	scores := make([]float64, x.Items())
	for u := 0; u < x.Users(); u += 5 {
		h := x.Row(u)
		m.Score(h, scores)
		// the bound as topN computes it (blockBound), and the bound of
		// the exact maxima, checked item by item
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
		for i, s := range scores {
			b := ri.block(ri.pos[i])
			if s > min(bounds[b], ri.bound[b]) {
				t.Fatalf("user %d: item %d scores %v above its block's bound %v (row-sum bound %v)", u, i, s, bounds[b], ri.bound[b])
			}
			if ub := ri.blockBound(h, b); s > ub {
				t.Fatalf("user %d: item %d scores %v above its block's computed bound %v", u, i, s, ub)
			}
		}
		// restBounds computes the same bounds together, from any block on
		sc := ri.pool.Get().(*rankScratch)
		sc.hist = append(sc.hist[:0], h...)
		from := u % ri.nBlocks()
		for _, bb := range ri.restBounds(sc, from, nil) {
			if want := min(ri.blockBound(h, int(bb.b)), ri.bound[bb.b]); bb.ub != want {
				t.Fatalf("user %d: restBounds from %d gives block %d bound %v, blockBound %v", u, from, bb.b, bb.ub, want)
			}
		}
		ri.pool.Put(sc)
		// the static bounds do not increase: the lazy order relies on it
		for b := 1; b < len(ri.bound); b++ {
			if ri.bound[b] > ri.bound[b-1] {
				t.Fatalf("static bound of block %d (%v) above block %d's (%v)", b, ri.bound[b], b-1, ri.bound[b-1])
			}
		}
	}
}

// TestRankTop_sameAsFullScoring_ml100k is TestRankTop_sameAsFullScoring on
// the positives of MovieLens 100K (../shared/datasets/ml-100k), k = 50:
// real co-occurrences, where bounds and row sums do not line up as in
// generated data.
func TestRankTop_sameAsFullScoring_ml100k(t *testing.T) {
	path := filepath.Join("..", "..", "shared", "datasets", "ml-100k")
	if _, err := os.Stat(path); err != nil {
		if os.Getenv("RECSYS_SKIP_REAL_DATA") == "1" {
			t.Skipf("no data set at %s and RECSYS_SKIP_REAL_DATA=1", path)
		}
		t.Fatalf("this test reads %s (the shared data sets); put them there or set RECSYS_SKIP_REAL_DATA=1", path)
	}
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
}
