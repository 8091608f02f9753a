// Package frml implements FRML-WARP, Fast Ranking via Metric Learning
// (dissertation ch. 3, Algorithms 3.2–3.4): stochastic Riemannian descent of
// a rank-m metric W = LLᵀ on the WARP objective with β-terminated sampling
// (β-WSS), the reciprocal loss, the regulariser Ω_L (Eq. 3.22) and the
// symmetric retraction update of Algorithm 3.3. FRML-AUC is β = 1.
//
// Works cited in the comments are listed in docs/references.md; a bare
// section, equation or algorithm number refers to the dissertation.
package frml

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/recsys-engine/recsys/retrieval/rank"
)

// Problem is the training data (rank.Problem, shared with MLR): items as
// rows of X, relevance from Sup, and the items that may be drawn as
// queries (default Sup.Queries()).
type Problem = rank.Problem

// Validator scores a factor L on held-out queries; higher is better (the
// dissertation uses validation MAP, §3.5.1).
type Validator func(l *mat.Dense) float64

// Options configures Train.
type Options struct {
	// Rank is m, the rank of W (default min(d, 32)).
	Rank int
	// Kappa sets the sampling limit β = max(1, ⌊κ·|X⁻q|⌉) (§3.5; default 1,
	// the standard WARP scheme).
	Kappa float64
	// AUC selects FRML-AUC: β = 1 whatever κ (§3.5).
	AUC bool
	// Lambda is the weight λ of Ω_L (default 0.1, §3.5.1).
	Lambda float64
	// Batch is the mini-batch size b (default 5, §3.4.3).
	Batch int
	// Iterations is the number of queries drawn in all (default 100,000);
	// every draw counts as one iteration (§3.5.1).
	Iterations int
	// Segment is the number of iterations between step-size choices on the
	// validation set (default 5,000).
	Segment int
	// Etas are the step sizes tried for the first segment (default 1e-3,
	// 1e-2, 1e-1); later segments try 2η, η and η/2 around the last choice.
	Etas []float64
	// Patience stops training after that many segments without a better
	// validation score (default 3).
	Patience int
	// Schedule, when set, replays one step size per segment without
	// validation (the schedule a validated run returned).
	Schedule []float64
	// Init is the initial L (d×m); default N(0, 1/m) entries so E[LLᵀ] = I
	// (the dissertation draws standard normal entries, §3.5.1).
	Init *mat.Dense
	Seed uint64
	// Progress, when set, is called after each segment.
	Progress func(segment int, eta, score float64)
}

func (o *Options) defaults(d int) {
	if o.Rank <= 0 {
		o.Rank = min(d, 32)
	}
	o.Rank = min(o.Rank, d)
	if o.Kappa <= 0 {
		o.Kappa = 1
	}
	if o.Lambda < 0 {
		o.Lambda = 0
	} else if o.Lambda == 0 {
		o.Lambda = 0.1
	}
	if o.Batch <= 0 {
		o.Batch = 5
	}
	if o.Iterations <= 0 {
		o.Iterations = 100_000
	}
	if o.Segment <= 0 {
		o.Segment = 5_000
	}
	if len(o.Etas) == 0 {
		o.Etas = []float64{1e-3, 1e-2, 1e-1}
	}
	if o.Patience <= 0 {
		o.Patience = 3
	}
}

// Result is a trained factor.
type Result struct {
	L *mat.Dense
	// Schedule is the step size chosen for each segment up to the best one.
	Schedule []float64
	// Score is the best validation score (NaN without a validator).
	Score      float64
	Iterations int
	// Fallbacks counts updates (over all candidate runs) where Algorithm 3.3
	// was replaced by the projected step (see retractionOK).
	Fallbacks int
}

// Train runs FRML-WARP (Algorithm 3.4). With a validator the step size is
// chosen on it every Segment iterations among a few candidates started from
// the same L with the same random stream, and the L with the best score is
// returned (§3.5.1: "η chosen by MAP on a held-out set"). Without one, a
// Schedule is replayed, or Etas[0] is used throughout.
func Train(ctx context.Context, p Problem, val Validator, opt Options) (*Result, error) {
	if err := p.Check(); err != nil {
		return nil, fmt.Errorf("frml: %w", err)
	}
	_, d := p.X.Dims()
	opt.defaults(d)
	l := opt.Init
	if l == nil {
		rng := rand.New(rand.NewPCG(opt.Seed, 0x9e3779b97f4a7c15))
		l = mat.NewDense(d, opt.Rank, nil)
		s := 1 / math.Sqrt(float64(opt.Rank))
		for i := 0; i < d; i++ {
			for j := 0; j < opt.Rank; j++ {
				l.Set(i, j, s*rng.NormFloat64())
			}
		}
	} else {
		l = mat.DenseCopyOf(l)
	}
	t := newTrainer(p, opt)
	segments := (opt.Iterations + opt.Segment - 1) / opt.Segment
	res := &Result{Score: math.NaN()}
	switch {
	case len(opt.Schedule) > 0:
		for s, eta := range opt.Schedule {
			var err error
			if l, err = t.run(ctx, l, eta, opt.Segment, s); err != nil {
				return nil, err
			}
			res.Iterations += opt.Segment
		}
		res.L, res.Schedule, res.Fallbacks = l, slices.Clone(opt.Schedule), t.fallbacks
		return res, nil
	case val == nil:
		for s := 0; s < segments; s++ {
			var err error
			if l, err = t.run(ctx, l, opt.Etas[0], opt.Segment, s); err != nil {
				return nil, err
			}
			res.Schedule = append(res.Schedule, opt.Etas[0])
			res.Iterations += opt.Segment
		}
		res.L, res.Fallbacks = l, t.fallbacks
		return res, nil
	}
	best, bestL := val(l), l
	var sched, bestSched []float64
	cands := opt.Etas
	stall := 0
	for s := 0; s < segments; s++ {
		segBest, segEta := math.Inf(-1), 0.0
		var segL *mat.Dense
		for _, eta := range cands {
			next, err := t.run(ctx, l, eta, opt.Segment, s)
			if err != nil {
				return nil, err
			}
			if v := val(next); segL == nil || v > segBest {
				segBest, segEta, segL = v, eta, next
			}
		}
		l = segL
		sched = append(sched, segEta)
		if opt.Progress != nil {
			opt.Progress(s, segEta, segBest)
		}
		if segBest > best {
			best, bestL, bestSched = segBest, l, slices.Clone(sched)
			stall = 0
		} else if stall++; stall >= opt.Patience {
			break
		}
		cands = []float64{2 * segEta, segEta, segEta / 2}
	}
	res.L, res.Schedule, res.Score = bestL, bestSched, best
	res.Iterations = len(bestSched) * opt.Segment
	res.Fallbacks = t.fallbacks
	return res, nil
}

// trainer holds what the sampling loop reads.
type trainer struct {
	p        Problem
	opt      Options
	harmonic []float64 // harmonic[k] = Σ_{i≤k} 1/i, the reciprocal loss L_opt(k)
	// fallbacks counts updates that took the projected step.
	fallbacks int
}

func newTrainer(p Problem, opt Options) *trainer {
	n, _ := p.X.Dims()
	h := make([]float64, n+1)
	for k := 1; k <= n; k++ {
		h[k] = h[k-1] + 1/float64(k)
	}
	return &trainer{p: p, opt: opt, harmonic: h}
}

// lossWeight is L̂_WARP(ns) = L_opt(⌊|X⁻q|/ns⌋) (Eq. 3.10) for the
// reciprocal loss α_i = 1/i, normalised so that L_opt(|X⁻q|) = 1 (§3.2.1).
func (t *trainer) lossWeight(nNeg, ns int) float64 {
	return t.harmonic[nNeg/ns] / t.harmonic[nNeg]
}

// beta is the sampling limit of Algorithm 3.2.
func (t *trainer) beta(nNeg int) int {
	if t.opt.AUC {
		return 1
	}
	b := int(math.Round(t.opt.Kappa * float64(nNeg)))
	return max(1, min(b, nNeg))
}

// run performs iters iterations of Algorithm 3.4 from a copy of l with step
// size eta; the random stream depends only on the seed and the segment.
func (t *trainer) run(ctx context.Context, l *mat.Dense, eta float64, iters, segment int) (*mat.Dense, error) {
	rng := rand.New(rand.NewPCG(t.opt.Seed, uint64(segment)+1))
	x, sup, qs := t.p.X, t.p.Sup, t.p.Queries
	n, d := x.Dims()
	_, m := l.Dims()
	l = mat.DenseCopyOf(l)
	b := t.opt.Batch
	uCols := make([][]float64, 0, 2*b)
	coef := make([]float64, 0, 2*b)
	// Projections Lᵀx are cached for the current L (one batch), so a
	// distance costs O(m) once an item has been projected in O(d·m).
	cache := make([]float64, n*m)
	stamp := make([]int32, n)
	epoch := int32(1)
	project := func(i int) []float64 {
		row := cache[i*m : (i+1)*m]
		if stamp[i] == epoch {
			return row
		}
		clear(row)
		for a, xa := range x.RawRowView(i) {
			if xa == 0 {
				continue
			}
			for k, lk := range l.RawRowView(a) {
				row[k] += xa * lk
			}
		}
		stamp[i] = epoch
		return row
	}
	dist := func(q, i int) float64 {
		pq, pi := project(q), project(i)
		s := 0.0
		for k, v := range pq {
			t := v - pi[k]
			s += t * t
		}
		return s
	}
	diff := func(q, xi int) []float64 {
		a, c := x.RawRowView(q), x.RawRowView(xi)
		out := make([]float64, d)
		for i := range out {
			out[i] = a[i] - c[i]
		}
		return out
	}
	for it := 0; it < iters; {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		uCols, coef = uCols[:0], coef[:0]
		for k := 0; k < b && it < iters; k++ {
			it++
			q := qs[rng.IntN(len(qs))]
			nPos, nNeg := sup.NumRelevant(q), sup.NumIrrelevant(q)
			if nPos == 0 || nNeg == 0 {
				continue
			}
			rel := sup.Relevant(q)
			xp := q
			for xp == q {
				xp = int(rel[rng.IntN(len(rel))])
			}
			dPos := dist(q, xp)
			found, ns, xn := false, 1, -1
			for beta := t.beta(nNeg); ns <= beta; ns++ {
				xn = rng.IntN(n)
				for xn == q || sup.IsRelevant(q, xn) {
					xn = rng.IntN(n)
				}
				if dist(q, xn)-dPos < 1 {
					found = true
					break
				}
			}
			// Steps 13–19: c_qj = −η(L̂+λ), c_ql = ηL̂ (averaged over the batch).
			cj := -eta * t.opt.Lambda / float64(b)
			if found {
				w := t.lossWeight(nNeg, ns)
				cj = -eta * (w + t.opt.Lambda) / float64(b)
				coef = append(coef, eta*w/float64(b))
				uCols = append(uCols, diff(q, xn))
			}
			coef = append(coef, cj)
			uCols = append(uCols, diff(q, xp))
		}
		if len(coef) == 0 {
			continue
		}
		r := len(coef)
		u := mat.NewDense(d, r, nil)
		v := mat.NewDense(d, r, nil)
		for j, col := range uCols {
			for i, c := range col {
				v.Set(i, j, c)
				u.Set(i, j, coef[j]*c)
			}
		}
		st, err := symmetricUpdate(l, u, v)
		var next *mat.Dense
		if err == nil && finite(st.m) && retractionOK(l, st, zNorm(u, v)) {
			next = st.m
		} else {
			// Near the boundary of S⁺d,m the retraction breaks down (see
			// retractionOK); take the projected step of §3.4 instead.
			t.fallbacks++
			if next, err = projectRank(l, v, coef, 1e-6); err != nil || !finite(next) {
				continue
			}
		}
		l = next
		epoch++
	}
	return l, nil
}

// zNorm is ‖UVᵀ‖_F = √⟨UᵀU, VᵀV⟩.
func zNorm(u, v *mat.Dense) float64 {
	var uu, vv mat.Dense
	uu.Mul(u.T(), u)
	vv.Mul(v.T(), v)
	return math.Sqrt(math.Max(0, mat.Sum(elemMul(&uu, &vv))))
}

func elemMul(a, b *mat.Dense) *mat.Dense {
	var out mat.Dense
	out.MulElem(a, b)
	return &out
}

func finite(a *mat.Dense) bool {
	r, _ := a.Dims()
	for i := 0; i < r; i++ {
		for _, v := range a.RawRowView(i) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return false
			}
		}
	}
	return true
}
