package ltr

import (
	"math/rand/v2"
	"slices"
	"sort"
)

// maxBins is the most bins a feature can have: bin numbers are bytes.
const maxBins = 256

// binner maps feature values to quantile bins. cuts[f] ascends strictly;
// value v of feature f falls in bin b, the number of cuts below v, so that
// v ≤ cuts[f][b] exactly when v's bin is at most b. A split "bin ≤ b goes
// left" is then the split "x[f] ≤ cuts[f][b] goes left" on raw values.
type binner struct {
	cuts [][]float32
}

// newBinner places at most bins bins per feature at the quantiles of a
// sample of up to sample rows of q (all rows when fewer, else drawn with
// replacement from seed). A feature with fewer distinct values than bins
// gets one bin per value; a constant feature gets one bin and is never
// split.
func newBinner(q *Queries, bins, sample int, seed uint64) binner {
	n := q.Rows()
	rows := make([]int, 0, min(n, sample))
	if n <= sample {
		for r := range n {
			rows = append(rows, r)
		}
	} else {
		rng := rand.New(rand.NewPCG(seed, 0x6c7472))
		for range sample {
			rows = append(rows, rng.IntN(n))
		}
		slices.Sort(rows)
	}
	b := binner{cuts: make([][]float32, q.D)}
	col := make([]float32, len(rows))
	for f := range q.D {
		for k, r := range rows {
			col[k] = q.X[r*q.D+f]
		}
		slices.Sort(col)
		b.cuts[f] = quantileCuts(col, bins)
	}
	return b
}

// quantileCuts returns the cuts of at most bins bins of the sorted values:
// one after each distinct value but the largest when there are at most
// bins of them; otherwise a cut after each distinct value at which the
// running count first reaches the next multiple of len(sorted)/bins, so
// that each bin holds about as many values as the others.
func quantileCuts(sorted []float32, bins int) []float32 {
	m := len(sorted)
	distinct := 0
	for i := range m {
		if i == 0 || sorted[i] != sorted[i-1] {
			distinct++
		}
	}
	var cuts []float32
	if distinct <= bins {
		for i := 1; i < m; i++ {
			if sorted[i] != sorted[i-1] {
				cuts = append(cuts, sorted[i-1])
			}
		}
		return cuts
	}
	for i := 0; i < m; {
		j := i + 1
		for j < m && sorted[j] == sorted[i] {
			j++
		}
		// sorted[i:j] is one distinct value; j values are at or below it.
		if j < m && j*bins >= (len(cuts)+1)*m {
			cuts = append(cuts, sorted[i])
			if len(cuts) == bins-1 {
				break
			}
		}
		i = j
	}
	return cuts
}

// bin is the bin of value v of feature f.
func (b binner) bin(f int, v float32) uint8 {
	c := b.cuts[f]
	return uint8(sort.Search(len(c), func(i int) bool { return v <= c[i] }))
}

// apply returns the bins of every row of q, row-major like q.X.
func (b binner) apply(q *Queries) []uint8 {
	out := make([]uint8, len(q.X))
	for k, v := range q.X {
		out[k] = b.bin(k%q.D, v)
	}
	return out
}
