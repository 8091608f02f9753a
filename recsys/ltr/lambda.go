package ltr

import (
	"math"
	"slices"

	"github.com/recsys-engine/recsys/recsys/metrics"
)

// Order returns the candidate indices of one query's scores, best first:
// by score, highest first, and among equal scores the lower index first.
// Training and the measures of its Report rank by the same rule, so a
// ranking never depends on how a sort breaks ties.
func Order(scores []float64) []int {
	rows := make([]scored, len(scores))
	for i, v := range scores {
		rows[i] = scored{v, int32(i)}
	}
	slices.SortFunc(rows, cmpScored)
	order := make([]int, len(rows))
	for r, e := range rows {
		order[r] = int(e.i)
	}
	return order
}

// discount is the gain by rank of a Measure and its normaliser.
type discount struct {
	measure Measure
	k       int // NDCG cutoff; 0 for none
}

// gain is the discounted gain 1/log2(rank+2) of a relevant item at rank
// (counted from 0), 0 at or past the NDCG cutoff: dissertation Def. 4.2
// for ADG, Järvelin and Kekäläinen 2002 for NDCG.
func (dc discount) gain(rank int) float64 {
	if dc.measure == NDCG && dc.k > 0 && rank >= dc.k {
		return 0
	}
	return 1 / math.Log2(float64(rank)+2)
}

// norm divides the summed gains of a query with npos relevant items: |R⁺u|
// for ADG, the ideal DCG of min(npos, k) relevant items for NDCG.
func (dc discount) norm(npos int) float64 {
	if dc.measure == ADG {
		return float64(npos)
	}
	m := npos
	if dc.k > 0 {
		m = min(m, dc.k)
	}
	s := 0.0
	for r := range m {
		s += dc.gain(r)
	}
	return s
}

// value is the query's measure from the ranks of its relevant rows, as
// recsys/metrics computes it.
func (dc discount) value(ranks []int) float64 {
	switch {
	case dc.measure == ADG:
		return metrics.ADG(ranks)
	case dc.k > 0:
		return metrics.NDCGAt(ranks, dc.k)
	}
	return metrics.NDCG(ranks)
}

// queryScratch is the per-goroutine scratch space of one query's ranking.
type queryScratch struct {
	byScore  []scored
	dc       discount  // the discount of gainAt
	gainAt   []float64 // gainAt[r] is the discount's gain at rank r
	gainOf   []float64 // each row's gain at its rank
	rankOf   []int     // each row's rank
	pos, neg []int32
	posRanks []int // the positives' ranks, in row order
	// The irrelevant rows' scores and gains, and the sums of λ and w of
	// their pairs, gathered for the pair loop.
	negS, negG, negL, negW []float64
}

// scored is a row and its score.
type scored struct {
	s float64
	i int32
}

// cmpScored orders rows by score, highest first, then by index.
func cmpScored(a, b scored) int {
	switch {
	case a.s > b.s:
		return -1
	case a.s < b.s:
		return 1
	}
	return int(a.i - b.i)
}

// rank orders the rows of one query by s (as Order does) and records each
// row's discounted gain at its rank, the positive and negative rows, and
// the ranks of the positives in row order.
func (sc *queryScratch) rank(s []float64, y []uint8, dc discount) {
	n := len(s)
	sc.byScore = sc.byScore[:0]
	for i, v := range s {
		sc.byScore = append(sc.byScore, scored{v, int32(i)})
	}
	slices.SortFunc(sc.byScore, cmpScored)
	if sc.dc != dc {
		sc.dc, sc.gainAt = dc, sc.gainAt[:0]
	}
	for r := len(sc.gainAt); r < n; r++ {
		sc.gainAt = append(sc.gainAt, dc.gain(r))
	}
	sc.gainOf = slices.Grow(sc.gainOf[:0], n)[:n]
	sc.rankOf = slices.Grow(sc.rankOf[:0], n)[:n]
	for r, e := range sc.byScore {
		sc.gainOf[e.i] = sc.gainAt[r]
		sc.rankOf[e.i] = r
	}
	sc.pos, sc.neg, sc.posRanks = sc.pos[:0], sc.neg[:0], sc.posRanks[:0]
	for i := range n {
		if y[i] == 1 {
			sc.pos = append(sc.pos, int32(i))
			sc.posRanks = append(sc.posRanks, sc.rankOf[i])
		} else {
			sc.neg = append(sc.neg, int32(i))
		}
	}
}

// queryLambdas writes the λ-gradients and their weights of one query with
// scores s and labels y into lam and w, and returns the query's measure
// under s; ok is false when the query has no relevant row (no measure).
//
// Each pair of a relevant row i and an irrelevant row j has the cost
// C_ij = |ΔZ_ij| log(1 + e^{−σ(s_i−s_j)}), RankNet's cross-entropy
// (Burges 2010 §2) scaled by |ΔZ_ij|, the change of the query's measure
// when i and j swap ranks (§4): |g(r_i) − g(r_j)| / norm. With
// ρ_ij = 1/(1 + e^{σ(s_i−s_j)}),
//
//	λ_i = −∂C/∂s_i = Σ_j σ|ΔZ_ij|ρ_ij,  λ_j = −Σ_i σ|ΔZ_ij|ρ_ij   (§2.1, §4)
//	w_r = ∂²C/∂s_r² = Σ_{pairs of r} σ²|ΔZ_ij|ρ_ij(1−ρ_ij)       (§7)
//
// so λ is the direction a score should move: up for a relevant row.
func queryLambdas(s []float64, y []uint8, lam, w []float64, sigma float64, dc discount, sc *queryScratch) (z float64, ok bool) {
	clear(lam)
	clear(w)
	sc.rank(s, y, dc)
	if len(sc.pos) == 0 {
		return 0, false
	}
	norm := dc.norm(len(sc.pos))
	nn := len(sc.neg)
	negS := slices.Grow(sc.negS[:0], nn)[:nn]
	negG := slices.Grow(sc.negG[:0], nn)[:nn]
	negL := slices.Grow(sc.negL[:0], nn)[:nn]
	negW := slices.Grow(sc.negW[:0], nn)[:nn]
	sc.negS, sc.negG, sc.negL, sc.negW = negS, negG, negL, negW
	for k, j := range sc.neg {
		negS[k], negG[k], negL[k], negW[k] = s[j], sc.gainOf[j], 0, 0
	}
	for _, i := range sc.pos {
		gi, si := sc.gainOf[i], s[i]
		var li, wi float64
		for k, sj := range negS {
			dz := math.Abs(gi-negG[k]) / norm
			if dz == 0 {
				continue // both past the NDCG cutoff
			}
			rho := 1 / (1 + math.Exp(sigma*(si-sj)))
			l := sigma * dz * rho
			h := sigma * sigma * dz * rho * (1 - rho)
			li += l
			wi += h
			negL[k] -= l
			negW[k] += h
		}
		lam[i] = li
		w[i] = wi
	}
	for k, j := range sc.neg {
		lam[j], w[j] = negL[k], negW[k]
	}
	return dc.value(sc.posRanks), true
}

// queryMeasure is the measure of one query under scores s, ok false when
// it has no relevant row.
func queryMeasure(s []float64, y []uint8, dc discount, sc *queryScratch) (z float64, ok bool) {
	sc.rank(s, y, dc)
	if len(sc.pos) == 0 {
		return 0, false
	}
	return dc.value(sc.posRanks), true
}
