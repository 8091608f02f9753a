package rank

import (
	"cmp"
	"math"
	"slices"
)

// The ranking measures of seed 002 §4 and dissertation §3.5, on a ranking
// given as its relevance pattern: rel[p] says whether the item at position p
// (0 = top) is relevant. All lie in [0,1] with 1 for a perfect ranking.

// AveragePrecision is AP(q,y) = 1/|X⁺q| Σ_{k relevant} Prec@k (seed 002 §4).
// It is 0 when nothing is relevant.
func AveragePrecision(rel []bool) float64 {
	hits, sum := 0, 0.0
	for p, r := range rel {
		if r {
			hits++
			sum += float64(hits) / float64(p+1)
		}
	}
	if hits == 0 {
		return 0
	}
	return sum / float64(hits)
}

// AUC is the fraction of (relevant, irrelevant) pairs ranked in the right
// order; 1 when either set is empty.
func AUC(rel []bool) float64 {
	nPos, nNeg, bad := 0, 0, 0
	for _, r := range rel {
		if r {
			nPos++
			bad += nNeg // irrelevant items ranked above this relevant one
		} else {
			nNeg++
		}
	}
	if nPos == 0 || nNeg == 0 {
		return 1
	}
	return 1 - float64(bad)/(float64(nPos)*float64(nNeg))
}

// PrecisionAt is Prec@k: the relevant fraction of the first k results.
func PrecisionAt(rel []bool, k int) float64 {
	if k <= 0 {
		return 0
	}
	hits := 0
	for p := 0; p < k && p < len(rel); p++ {
		if rel[p] {
			hits++
		}
	}
	return float64(hits) / float64(k)
}

// ReciprocalRank is 1/position of the first relevant result (0 if none).
func ReciprocalRank(rel []bool) float64 {
	for p, r := range rel {
		if r {
			return 1 / float64(p+1)
		}
	}
	return 0
}

// Discount is D(i) of seed 002 §4: 1 at i = 1, 1/log2(i) for 2 ≤ i ≤ k and 0
// after (positions count from 1).
func Discount(i, k int) float64 {
	switch {
	case i < 1 || i > k:
		return 0
	case i == 1:
		return 1
	}
	return 1 / math.Log2(float64(i))
}

// NDCGAt is NDCG (Järvelin and Kekäläinen 2002) as NDCG(q,y;k) of seed 002
// §4 with binary relevance, normalised by the ideal ranking's value
// Σ_{i≤min(k,|X⁺q|)} D(i) so that a perfect ranking scores 1 (seed 002's
// Σ_{i≤k} D(i) assumes |X⁺q| ≥ k).
func NDCGAt(rel []bool, k int) float64 {
	dcg, nPos := 0.0, 0
	for p, r := range rel {
		if r {
			nPos++
			dcg += Discount(p+1, k)
		}
	}
	ideal := IdealDCG(nPos, k)
	if ideal == 0 {
		return 0
	}
	return dcg / ideal
}

// IdealDCG is Σ_{i=1}^{min(k,nPos)} D(i).
func IdealDCG(nPos, k int) float64 {
	s := 0.0
	for i := 1; i <= nPos && i <= k; i++ {
		s += Discount(i, k)
	}
	return s
}

// ByDistance returns the indices of dist in increasing distance, ties by
// index, leaving out skip (use -1 to keep all).
func ByDistance(dist []float64, skip int) []int {
	order := make([]int, 0, len(dist))
	for i := range dist {
		if i != skip {
			order = append(order, i)
		}
	}
	slices.SortFunc(order, func(a, b int) int {
		if c := cmp.Compare(dist[a], dist[b]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	return order
}
