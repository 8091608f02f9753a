// Package metrics computes the top-N ranking measures of the offline
// evaluation (docs/design.md#evaluation) from ranks: rank(i, y) is the number of items ranked
// before a relevant item i (dissertation Def. 4.1, 0 at the top) in a
// ranking of n items (every item not in the user's training set). The ranks
// of one user's relevant items are distinct.
//
// Works cited in the comments are listed in docs/references.md; a bare
// section, equation or algorithm number refers to the dissertation.
package metrics

import (
	"math"
	"slices"
)

// Measure indices into Values, in report order.
const (
	MADG = iota
	MRecall10
	MMAP
	MNDCG
	MNDCG10
	MATOP
	MAUC
	MP10
	MMRR
	NumMeasures
)

// Names are the report keys of the measures, indexed like Values.
var Names = [NumMeasures]string{"adg", "rec@10", "map", "ndcg", "ndcg@10", "atop", "auc", "p@10", "mrr"}

// Values holds one value per measure.
type Values [NumMeasures]float64

// All computes every measure for one user: ranks of the user's relevant
// held-out items among n ranked items. It returns zeros when ranks is empty.
func All(ranks []int, n int) Values {
	var v Values
	if len(ranks) == 0 {
		return v
	}
	r := slices.Sorted(slices.Values(ranks))
	v[MADG] = ADG(r)
	v[MRecall10] = RecallAt(r, 10)
	v[MMAP] = AP(r)
	v[MNDCG] = NDCG(r)
	v[MNDCG10] = NDCGAt(r, 10)
	v[MATOP] = ATOP(r, n)
	v[MAUC] = AUC(r, n)
	v[MP10] = PrecisionAt(r, 10)
	v[MMRR] = RR(r)
	return v
}

// gain is the discount 1/log2(rank+2) of ADG and NDCG (Def. 4.2).
func gain(rank int) float64 { return 1 / math.Log2(float64(rank)+2) }

// dcgAt is the discounted gain of the relevant items ranked in the top k,
// Σ_{rank<k} gain(rank), summed in the order of ranks.
func dcgAt(ranks []int, k int) float64 {
	s := 0.0
	for _, r := range ranks {
		if r < k {
			s += gain(r)
		}
	}
	return s
}

// ADG is the Average Discounted Gain, dissertation Def. 4.2, Eq. (4.1):
// (1/|R⁺u|) Σ 1/log2(rank(i⁺)+2).
func ADG(ranks []int) float64 {
	if len(ranks) == 0 {
		return 0
	}
	return dcgAt(ranks, math.MaxInt) / float64(len(ranks))
}

// RecallAt is REC@k, dissertation Eq. (4.2): the share of relevant items
// in the top k positions (rank < k with ranks counted from 0).
func RecallAt(ranks []int, k int) float64 {
	if len(ranks) == 0 {
		return 0
	}
	return float64(hitsAt(ranks, k)) / float64(len(ranks))
}

// PrecisionAt is P@k (McFee and Lanckriet 2010, §5): the share of the top k
// positions that hold a relevant item.
func PrecisionAt(ranks []int, k int) float64 {
	if k <= 0 {
		return 0
	}
	return float64(hitsAt(ranks, k)) / float64(k)
}

func hitsAt(ranks []int, k int) int {
	h := 0
	for _, r := range ranks {
		if r < k {
			h++
		}
	}
	return h
}

// AP is the average precision whose mean over users is MAP (dissertation
// §4.7.4): (1/|R⁺u|) Σ_{i⁺} |{relevant ranked at or above i⁺}| / (rank(i⁺)+1).
func AP(ranks []int) float64 {
	if len(ranks) == 0 {
		return 0
	}
	r := sortedCopy(ranks)
	s := 0.0
	for k, rank := range r {
		s += float64(k+1) / float64(rank+1)
	}
	return s / float64(len(r))
}

// NDCG is the binary NDCG (Järvelin and Kekäläinen 2002) of dissertation
// §4.4.1 ("Comparison with NDCG"): Σ 1/log2(rank(i⁺)+2) / IDCG(|R⁺u|),
// with IDCG(m) = Σ_{r=0}^{m−1} 1/log2(r+2) the DCG of the ideal ranking,
// so that a perfect ranking scores 1.
func NDCG(ranks []int) float64 {
	if len(ranks) == 0 {
		return 0
	}
	return dcgAt(ranks, math.MaxInt) / idcg(len(ranks))
}

// NDCGAt is NDCG truncated to the top k positions: Σ_{rank<k} gain /
// IDCG(min(|R⁺u|, k)).
func NDCGAt(ranks []int, k int) float64 {
	if len(ranks) == 0 || k <= 0 {
		return 0
	}
	return dcgAt(ranks, k) / idcg(min(len(ranks), k))
}

func idcg(m int) float64 {
	s := 0.0
	for r := range m {
		s += gain(r)
	}
	return s
}

// ATOP is the area under the top-k recall curve of Steck (2010), the UMD
// measure of dissertation Eq. (4.2) with the normalised rank counted from
// the bottom: (1/|R⁺u|) Σ (n−1−rank(i⁺))/(n−1), 1 at the top, 0 at the
// bottom. It is 1 when n = 1.
func ATOP(ranks []int, n int) float64 {
	if len(ranks) == 0 {
		return 0
	}
	if n <= 1 {
		return 1
	}
	s := 0.0
	for _, r := range ranks {
		s += float64(n-1-r) / float64(n-1)
	}
	return s / float64(len(ranks))
}

// AUC is the share of (relevant, irrelevant) pairs ranked in the right
// order among the n ranked items (Rendle et al. 2009; seed 002 §5). It is 1
// when every ranked item is relevant (no pair to misorder).
func AUC(ranks []int, n int) float64 {
	m := len(ranks)
	if m == 0 {
		return 0
	}
	if n <= m {
		return 1
	}
	r := sortedCopy(ranks)
	good := 0.0
	for k, rank := range r {
		// Items after rank: n−1−rank; relevant among them: m−1−k.
		good += float64((n - 1 - rank) - (m - 1 - k))
	}
	return good / (float64(m) * float64(n-m))
}

// RR is the reciprocal rank 1/(rank+1) of the best-ranked relevant item,
// whose mean over users is MRR (seed 002 §5).
func RR(ranks []int) float64 {
	if len(ranks) == 0 {
		return 0
	}
	return 1 / float64(slices.Min(ranks)+1)
}

func sortedCopy(ranks []int) []int {
	if slices.IsSorted(ranks) {
		return ranks
	}
	return slices.Sorted(slices.Values(ranks))
}
