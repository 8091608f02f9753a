package ltr

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/recsys-engine/recsys/recsys/metrics"
)

// xorQueries generates nq queries of n candidates with d ≥ 2 features
// uniform on [−1, 1]: a candidate is relevant when x₀·x₁ > 0.4 (about
// 12% of them), a pattern no linear function of the features ranks; the
// other features are noise.
func xorQueries(tb testing.TB, seed uint64, nq, n, d int) Queries {
	rng := rand.New(rand.NewPCG(seed, 1))
	return genQueries(tb, nq, n, d, func(row []float32) bool {
		for f := range row {
			row[f] = float32(2*rng.Float64() - 1)
		}
		return row[0]*row[1] > 0.4
	})
}

// genQueries is nq queries of n candidates with d features, each row
// drawn by fill, which says whether the candidate is relevant.
func genQueries(tb testing.TB, nq, n, d int, fill func(row []float32) bool) Queries {
	tb.Helper()
	q := Queries{D: d}
	x := make([]float32, n*d)
	y := make([]uint8, n)
	for range nq {
		for i := range n {
			y[i] = 0
			if fill(x[i*d : (i+1)*d]) {
				y[i] = 1
			}
		}
		if err := q.Add(x, y); err != nil {
			tb.Fatal(err)
		}
	}
	return q
}

// meanMeasure ranks each query by score (highest first, ties by the
// lower candidate index, with a stable sort written apart from Order) and
// returns the mean measure over the queries with a relevant candidate.
func meanMeasure(q Queries, score func(x []float32) float64, ndcgK int, measure Measure) float64 {
	sum, n := 0.0, 0
	for i := range q.Len() {
		lo, hi := q.Query(i)
		s := make([]float64, hi-lo)
		for r := lo; r < hi; r++ {
			s[r-lo] = score(q.X[r*q.D : (r+1)*q.D])
		}
		ranks := bruteRanks(s, q.Labels[lo:hi])
		if len(ranks) == 0 {
			continue
		}
		switch {
		case measure == ADG:
			sum += metrics.ADG(ranks)
		case ndcgK > 0:
			sum += metrics.NDCGAt(ranks, ndcgK)
		default:
			sum += metrics.NDCG(ranks)
		}
		n++
	}
	return sum / float64(n)
}

// bruteRanks returns the ranks of the relevant candidates, in candidate
// order, of the ranking by s with ties broken by the lower index.
func bruteRanks(s []float64, y []uint8) []int {
	order := bruteOrder(s)
	rank := make([]int, len(s))
	for r, i := range order {
		rank[i] = r
	}
	var ranks []int
	for i, l := range y {
		if l == 1 {
			ranks = append(ranks, rank[i])
		}
	}
	return ranks
}

// bruteOrder is the candidates by descending s, ties by the lower index,
// sorted apart from the package's Order.
func bruteOrder(s []float64) []int {
	order := make([]int, len(s))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case s[a] > s[b]:
			return -1
		case s[a] < s[b]:
			return 1
		}
		return 0
	})
	return order
}
