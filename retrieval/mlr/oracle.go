package mlr

import (
	"fmt"
	"math"

	"github.com/recsys-engine/recsys/retrieval/rank"
)

// Loss names for the separation oracles of seed 002 §4.
const (
	LossAUC       = "auc"
	LossPrecision = "p@k"
	LossMAP       = "map"
	LossMRR       = "mrr"
	LossNDCG      = "ndcg"
)

// Losses lists the supported losses.
var Losses = []string{LossAUC, LossPrecision, LossMAP, LossMRR, LossNDCG}

// Oracle is a separation oracle (seed 002 Eq. 2, Alg. 1 step 5): for one
// query it finds the ranking y maximising Δ(y*, y) + ⟨W, ψpo(q, y)⟩.
//
// All five measures are invariant to permutations inside the relevant and
// the irrelevant sets, so the maximiser is an interleaving of the two sets,
// each pre-sorted by decreasing score s(x) = ⟨W, φM(q,x)⟩ = −‖q−x‖²_W (Yue
// et al. 2007). An interleaving is written r: r[a] is the number of
// irrelevant items ranked above the a-th relevant item, non-decreasing in a.
// With it ⟨W, ψpo⟩ = Σ_a g_a(r[a]) where
//
//	g_a(r) = ((|X⁻q| − 2r)·s⁺_a − Σ_j s⁻_j + 2·Σ_{j≤r} s⁻_j) / (|X⁺q|·|X⁻q|),
//
// a concave function maximised at r*_a = #{j : s⁻_j > s⁺_a}.
type Oracle struct {
	Loss string
	// K is the cut-off of p@k and ndcg (default 10).
	K int
}

// Validate checks the loss name.
func (o Oracle) Validate() error {
	for _, l := range Losses {
		if o.Loss == l {
			return nil
		}
	}
	return fmt.Errorf("mlr: unknown loss %q (want one of %v)", o.Loss, Losses)
}

func (o Oracle) k() int {
	if o.K <= 0 {
		return 10
	}
	return o.K
}

// Score is the measure of the ranking given by the interleaving r with nNeg
// irrelevant items.
func (o Oracle) Score(r []int, nNeg int) float64 {
	return o.scorePattern(Pattern(r, nNeg))
}

func (o Oracle) scorePattern(rel []bool) float64 {
	switch o.Loss {
	case LossAUC:
		return rank.AUC(rel)
	case LossPrecision:
		return rank.PrecisionAt(rel, o.k())
	case LossMAP:
		return rank.AveragePrecision(rel)
	case LossMRR:
		return rank.ReciprocalRank(rel)
	case LossNDCG:
		return rank.NDCGAt(rel, o.k())
	}
	panic("mlr: unknown loss " + o.Loss)
}

// Delta is Δ(y*, y) = Score(y*) − Score(y) for the interleaving r.
func (o Oracle) Delta(r []int, nNeg int) float64 {
	return o.Score(make([]int, len(r)), nNeg) - o.Score(r, nNeg)
}

// Pattern turns an interleaving into the relevance pattern in rank order.
func Pattern(r []int, nNeg int) []bool {
	rel := make([]bool, 0, len(r)+nNeg)
	j := 0
	for _, ra := range r {
		for ; j < ra; j++ {
			rel = append(rel, false)
		}
		rel = append(rel, true)
	}
	for ; j < nNeg; j++ {
		rel = append(rel, false)
	}
	return rel
}

// Separate returns the most violated interleaving for relevant scores pos
// and irrelevant scores neg, both sorted in decreasing order, and its loss
// Δ(y*, y). Empty pos or neg give the trivial ranking with Δ = 0.
func (o Oracle) Separate(pos, neg []float64) (r []int, delta float64) {
	nP, nN := len(pos), len(neg)
	r = make([]int, nP)
	if nP == 0 || nN == 0 {
		return r, 0
	}
	t := newTerms(pos, neg)
	switch o.Loss {
	case LossAUC:
		o.separateAUC(t, r)
	case LossPrecision:
		o.separatePrecision(t, r)
	case LossMAP:
		o.separateMAP(t, r)
	case LossMRR:
		o.separateMRR(t, r)
	case LossNDCG:
		o.separateNDCG(t, r)
	default:
		panic("mlr: unknown loss " + o.Loss)
	}
	return r, o.Delta(r, nN)
}

// terms holds what g_a(r) needs.
type terms struct {
	pos, neg []float64
	nP, nN   int
	inv      float64   // 1/(|X⁺q|·|X⁻q|)
	sumNeg   float64   // Σ_j s⁻_j
	pre      []float64 // pre[r] = Σ_{j<r} s⁻_j
	preP     []float64 // preP[a] = Σ_{a'<a} s⁺_a'
	rstar    []int     // r*_a
	tailStar []float64 // tailStar[a] = Σ_{a'≥a} g_a'(r*_a')
}

func newTerms(pos, neg []float64) *terms {
	nP, nN := len(pos), len(neg)
	t := &terms{pos: pos, neg: neg, nP: nP, nN: nN, inv: 1 / (float64(nP) * float64(nN))}
	t.pre = make([]float64, nN+1)
	for j, s := range neg {
		t.pre[j+1] = t.pre[j] + s
	}
	t.sumNeg = t.pre[nN]
	t.preP = make([]float64, nP+1)
	for a, s := range pos {
		t.preP[a+1] = t.preP[a] + s
	}
	t.rstar = make([]int, nP)
	j := 0
	for a, s := range pos {
		for j < nN && neg[j] > s {
			j++
		}
		t.rstar[a] = j
	}
	t.tailStar = make([]float64, nP+1)
	for a := nP - 1; a >= 0; a-- {
		t.tailStar[a] = t.tailStar[a+1] + t.g(a, t.rstar[a])
	}
	return t
}

// g is g_a(r), the a-th relevant item's share of ⟨W, ψpo⟩.
func (t *terms) g(a, r int) float64 {
	return (float64(t.nN-2*r)*t.pos[a] - t.sumNeg + 2*t.pre[r]) * t.inv
}

// tail is Σ_{a≥from} g_a(max(r*_a, c)) and the number p of a ≥ from with
// r*_a < c (they form the prefix from..from+p-1); p must be passed in as a
// lower bound and is advanced, so a scan over increasing c is linear.
func (t *terms) tail(from, c int, p *int) float64 {
	for from+*p < t.nP && t.rstar[from+*p] < c {
		*p++
	}
	k := *p
	clamped := (float64(t.nN-2*c)*(t.preP[from+k]-t.preP[from]) - float64(k)*t.sumNeg + 2*float64(k)*t.pre[c]) * t.inv
	return clamped + t.tailStar[from+k]
}

// separateAUC: Δ_AUC decomposes over pairs, so each pair is swapped iff that
// gains, i.e. iff s⁻_j > s⁺_a − ½ (Joachims 2005).
func (o Oracle) separateAUC(t *terms, r []int) {
	j := 0
	for a, s := range t.pos {
		for j < t.nN && t.neg[j] > s-0.5 {
			j++
		}
		r[a] = j
	}
}

// separatePrecision tries every number h of relevant items in the top k
// (seed 002 §4, Joachims 2005): the top h relevant and top k−h irrelevant
// items fill the top k, and every other r[a] is its unconstrained optimum
// r*_a clamped to the cut.
func (o Oracle) separatePrecision(t *terms, r []int) {
	k := o.k()
	kk := min(k, t.nP+t.nN)
	best, bestH := math.Inf(-1), -1
	for h := max(0, kk-t.nN); h <= min(kk, t.nP); h++ {
		c := kk - h
		v := -float64(h) / float64(k)
		for a := 0; a < t.nP; a++ {
			if a < h {
				v += t.g(a, min(t.rstar[a], c))
			} else {
				v += t.g(a, max(t.rstar[a], c))
			}
		}
		if v > best {
			best, bestH = v, h
		}
	}
	c := kk - bestH
	for a := range r {
		if a < bestH {
			r[a] = min(t.rstar[a], c)
		} else {
			r[a] = max(t.rstar[a], c)
		}
	}
}

// separateMRR tries every position c of the first relevant item; the others
// take max(r*_a, c) (seed 002 §4, Chakrabarti et al. 2008).
func (o Oracle) separateMRR(t *terms, r []int) {
	best, bestC, p := math.Inf(-1), 0, 0
	for c := 0; c <= t.nN; c++ {
		v := -1/float64(1+c) + t.g(0, c) + t.tail(1, c, &p)
		if v > best {
			best, bestC = v, c
		}
	}
	r[0] = bestC
	for a := 1; a < t.nP; a++ {
		r[a] = max(t.rstar[a], bestC)
	}
}

// separateMAP maximises Σ_a h_a(r_a), h_a(c) = −(a+1)/(|X⁺q|·(a+1+c)) +
// g_a(c), over non-decreasing r. Both terms are concave in c (g_a's
// increments 2(s⁻_{c+1} − s⁺_a)/(|X⁺q||X⁻q|) fall as s⁻ is sorted, and so do
// those of the AP term), so the chain-ordered problem is solved exactly by
// pooling adjacent violators: each relevant item starts at its own maximiser,
// and neighbouring blocks that violate the order are merged and re-solved by
// bisection on the block's summed increments. This replaces the
// O(|X⁺q|·|X⁻q|) dynamic programme of seed 002 §4 (kept as separateMAPDP to
// cross-check it) by O(|X⁺q|·log|X⁻q|) bisections.
func (o Oracle) separateMAP(t *terms, r []int) {
	nP := float64(t.nP)
	// inc is the summed increment Σ_{a∈[lo,hi]} h_a(c+1) − h_a(c).
	inc := func(lo, hi, c int) float64 {
		s := 2 * t.inv * (float64(hi-lo+1)*t.neg[c] - (t.preP[hi+1] - t.preP[lo]))
		for a := lo; a <= hi; a++ {
			i := float64(a + 1)
			s += i / (nP * (i + float64(c)) * (i + float64(c) + 1))
		}
		return s
	}
	// argmax is the smallest c in [from, to] with inc(c) ≤ 0 (to if none).
	argmax := func(lo, hi, from, to int) int {
		a, b := from, to
		for a < b {
			c := (a + b) / 2
			if inc(lo, hi, c) <= 0 {
				b = c
			} else {
				a = c + 1
			}
		}
		return a
	}
	type block struct{ lo, hi, r int }
	stack := make([]block, 0, t.nP)
	for a := 0; a < t.nP; a++ {
		stack = append(stack, block{a, a, argmax(a, a, 0, t.nN)})
		for len(stack) > 1 && stack[len(stack)-1].r < stack[len(stack)-2].r {
			top := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			prev := &stack[len(stack)-1]
			// The pooled maximiser lies between the two blocks' maximisers.
			prev.hi = top.hi
			prev.r = argmax(prev.lo, prev.hi, top.r, prev.r)
		}
	}
	for _, b := range stack {
		for a := b.lo; a <= b.hi; a++ {
			r[a] = b.r
		}
	}
}

// separateMAPDP is the O(|X⁺q|·|X⁻q|) dynamic programme for the MAP oracle
// (seed 002 §4); the tests check separateMAP against it.
func (o Oracle) separateMAPDP(t *terms, r []int) {
	nP := float64(t.nP)
	f, arg := dpInterleave(t, t.nP, func(a int, h []float64) {
		i := float64(a + 1)
		base := (float64(t.nN)*t.pos[a] - t.sumNeg) * t.inv
		step := 2 * t.inv
		for c := range h {
			h[c] = base + step*(t.pre[c]-float64(c)*t.pos[a]) - i/(nP*(i+float64(c)))
		}
	})
	c := argmax(f)
	backtrack(arg, t.nP, c, r)
}

// separateNDCG runs the same dynamic programme over the relevant items that
// can reach the top k (a < min(k, |X⁺q|)); the rest only shape ⟨W, ψ⟩ and
// take max(r*_a, r_K) (Chakrabarti et al. 2008).
func (o Oracle) separateNDCG(t *terms, r []int) {
	k := o.k()
	kk := min(k, t.nP)
	ideal := rank.IdealDCG(t.nP, k)
	f, arg := dpInterleave(t, kk, func(a int, h []float64) {
		for c := range h {
			h[c] = t.g(a, c) - rank.Discount(a+1+c, k)/ideal
		}
	})
	p := 0
	for c := range f {
		f[c] += t.tail(kk, c, &p)
	}
	c := argmax(f)
	backtrack(arg, kk, c, r)
	for a := kk; a < t.nP; a++ {
		r[a] = max(t.rstar[a], c)
	}
}

// dpInterleave maximises Σ_{a<rows} h_a(r_a) over non-decreasing r in
// [0, |X⁻q|]: F_a(c) = h_a(c) + max_{c'≤c} F_{a−1}(c'). It returns F_{rows−1}
// and, per row, the argmax of the running maximum for backtracking.
func dpInterleave(t *terms, rows int, h func(a int, row []float64)) ([]float64, [][]int32) {
	n := t.nN + 1
	f := make([]float64, n)
	hRow := make([]float64, n)
	arg := make([][]int32, rows)
	for a := 0; a < rows; a++ {
		h(a, hRow)
		if a == 0 {
			copy(f, hRow)
			continue
		}
		// Running maximum of F_{a−1}, then add h_a.
		am := make([]int32, n)
		best, bi := math.Inf(-1), int32(0)
		for c := 0; c < n; c++ {
			if f[c] > best {
				best, bi = f[c], int32(c)
			}
			am[c] = bi
			f[c] = best + hRow[c]
		}
		arg[a] = am
	}
	return f, arg
}

func backtrack(arg [][]int32, rows, c int, r []int) {
	for a := rows - 1; a >= 0; a-- {
		r[a] = c
		if a > 0 {
			c = int(arg[a][c])
		}
	}
}

func argmax(f []float64) int {
	bi := 0
	for i, v := range f {
		if v > f[bi] {
			bi = i
		}
	}
	return bi
}
