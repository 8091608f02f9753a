package mf

import (
	"context"
	"math/rand/v2"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"

	"recsys/recsys"
)

// WRMF is weighted regularised matrix factorisation for implicit feedback
// (Hu, Koren and Volinsky 2008): it minimises
//
//	Σᵤᵢ cᵤᵢ (pᵤᵢ − uᵤ·vᵢ)² + λ(Σᵤ‖uᵤ‖² + Σᵢ‖vᵢ‖²),  pᵤᵢ = X(u,i), cᵤᵢ = 1 + α·X(u,i),
//
// by alternating least squares. With V fixed, user u's factor solves
//
//	(VᵀV + α Σᵢ∈O⁺ᵤ vᵢvᵢᵀ + λI) uᵤ = (1 + α) Σᵢ∈O⁺ᵤ vᵢ,
//
// where VᵀV is computed once per sweep (the paper's YᵀY trick), so a solve
// costs O(|O⁺ᵤ|k + k²) per conjugate-gradient step; items are symmetric.
// Each sweep takes a few CG steps warm-started from the previous factors
// (Takács et al. 2011); the fit ends with an exact (Cholesky) user sweep,
// so the stored user factors are the ALS solution for the final V, which
// is what FoldIn computes for any history. Sweeps run in parallel over
// users, then items.
//
// Params: K factors (DefaultFactors); Extra keys "alpha" (1), "lambda"
// (0.015), "epochs" (15 alternations), "cg" (CG steps per solve, 3; 0
// solves every sweep exactly) and "seed" (1).
type WRMF struct {
	cfg  wrmfConfig
	f    factors
	gram []float64 // VᵀV for fold-ins
}

type wrmfConfig struct {
	factors       int
	alpha, lambda float64
	epochs, cg    int
	seed          uint64
}

func (c wrmfConfig) params() []float64 {
	return []float64{float64(c.factors), c.alpha, c.lambda, float64(c.epochs), float64(c.cg), float64(c.seed)}
}

func wrmfConfigFrom(p recsys.Params) (wrmfConfig, error) {
	k, err := numFactors(p)
	if err != nil {
		return wrmfConfig{}, err
	}
	e := extras{m: p.Extra}
	c := wrmfConfig{
		factors: k,
		alpha:   e.float("alpha", 1, 0, 1e9),
		lambda:  e.float("lambda", 0.015, 1e-12, 1e9),
		epochs:  e.int("epochs", 15, 0, 1e6),
		cg:      e.int("cg", 3, 0, 1e6),
		seed:    uint64(e.int("seed", 1, 0, 1<<53)),
	}
	return c, e.err
}

func (m *WRMF) Name() string { return "wrmf" }

// Params reports the hyper-parameters for recsys.ParamsOf.
func (m *WRMF) Params() map[string]float64 {
	c := m.cfg
	return map[string]float64{"factors": float64(c.factors), "alpha": c.alpha, "lambda": c.lambda, "epochs": float64(c.epochs)}
}

// alsSolver holds one goroutine's scratch space for the normal equations
// A x = b with A = G + λI + α Σ yᵢyᵢᵀ over the rows' other-side factors.
type alsSolver struct {
	k             int
	alpha, lambda float64
	a             []float64 // k×k for the exact solve
	b, r, p, ap   []float64
}

func newALSSolver(c *wrmfConfig) *alsSolver {
	k := c.factors
	return &alsSolver{k: k, alpha: c.alpha, lambda: c.lambda, a: make([]float64, k*k),
		b: make([]float64, k), r: make([]float64, k), p: make([]float64, k), ap: make([]float64, k)}
}

// rhs sets b = (1 + α) Σ yᵢ.
func (s *alsSolver) rhs(rows []uint32, y []float64) {
	k := s.k
	clear(s.b)
	for _, i := range rows {
		axpy(1+s.alpha, y[int(i)*k:int(i+1)*k], s.b)
	}
}

// mul sets out = A x.
func (s *alsSolver) mul(g []float64, rows []uint32, y, x, out []float64) {
	k := s.k
	blas64.Gemv(blas.NoTrans, 1, blas64.General{Rows: k, Cols: k, Stride: k, Data: g},
		blas64.Vector{N: k, Inc: 1, Data: x}, 0, blas64.Vector{N: k, Inc: 1, Data: out})
	axpy(s.lambda, x, out)
	for _, i := range rows {
		yi := y[int(i)*k : int(i+1)*k]
		axpy(s.alpha*dot(yi, x), yi, out)
	}
}

// cg improves x by steps of conjugate gradient.
func (s *alsSolver) cg(g []float64, rows []uint32, y, x []float64, steps int) {
	s.rhs(rows, y)
	s.mul(g, rows, y, x, s.ap)
	for f := range s.r {
		s.r[f] = s.b[f] - s.ap[f]
	}
	copy(s.p, s.r)
	rs := dot(s.r, s.r)
	for range steps {
		if rs <= 1e-30 {
			return
		}
		s.mul(g, rows, y, s.p, s.ap)
		step := rs / dot(s.p, s.ap)
		axpy(step, s.p, x)
		axpy(-step, s.ap, s.r)
		next := dot(s.r, s.r)
		for f := range s.p {
			s.p[f] = s.r[f] + next/rs*s.p[f]
		}
		rs = next
	}
}

// exact sets x to the solution by a Cholesky factorisation of A.
func (s *alsSolver) exact(g []float64, rows []uint32, y, x []float64) {
	k := s.k
	copy(s.a, g)
	for f := range k {
		s.a[f*k+f] += s.lambda
	}
	sym := blas64.Symmetric{N: k, Stride: k, Uplo: blas.Upper, Data: s.a}
	for _, i := range rows {
		blas64.Syr(s.alpha, blas64.Vector{N: k, Inc: 1, Data: y[int(i)*k : int(i+1)*k]}, sym)
	}
	s.rhs(rows, y)
	copy(x, s.b)
	t, ok := lapack64.Potrf(sym)
	if !ok {
		// A is positive definite for λ > 0; rounding aside, fall back.
		clear(x)
		s.cg(g, rows, y, x, 2*k)
		return
	}
	lapack64.Potrs(t, blas64.General{Rows: k, Cols: 1, Stride: 1, Data: x})
}

// wrmfTrainer alternates the sweeps of a fit.
type wrmfTrainer struct {
	c *wrmfConfig
	f *factors
	x *recsys.Matrix
}

func newWRMFTrainer(x *recsys.Matrix, c *wrmfConfig, f *factors) *wrmfTrainer {
	f.init(x, c.factors, false)
	rng := rand.New(rand.NewPCG(c.seed, 0x77726d66))
	gaussian(rng, f.item, 0.1)
	return &wrmfTrainer{c: c, f: f, x: x}
}

// sweep solves every row of one side given the other side's factors.
func (t *wrmfTrainer) sweep(ctx context.Context, users, exact bool) error {
	k := t.f.k
	n, rowsOf, mine, other := t.f.nUsers, t.x.Row, t.f.user, t.f.item
	if !users {
		n, rowsOf, mine, other = t.f.nItems, t.x.Col, t.f.item, t.f.user
	}
	g := gram(other, k)
	return recsys.ParallelFor(ctx, n, 32, "", nil, func() func(lo, hi int) {
		s := newALSSolver(t.c)
		return func(lo, hi int) {
			for r := lo; r < hi; r++ {
				x := mine[r*k : (r+1)*k]
				if exact || t.c.cg == 0 {
					s.exact(g, rowsOf(r), other, x)
				} else {
					s.cg(g, rowsOf(r), other, x, t.c.cg)
				}
			}
		}
	})
}

// epoch is one alternation: users, then items.
func (t *wrmfTrainer) epoch(ctx context.Context) error {
	if err := t.sweep(ctx, true, false); err != nil {
		return err
	}
	return t.sweep(ctx, false, false)
}

// Fit alternates the configured epochs, then solves the users exactly.
func (m *WRMF) Fit(ctx context.Context, x *recsys.Matrix, p recsys.Params) error {
	c, err := wrmfConfigFrom(p)
	if err != nil {
		return err
	}
	var f factors
	t := newWRMFTrainer(x, &c, &f)
	for e := range c.epochs {
		if err := t.epoch(ctx); err != nil {
			return err
		}
		if p.Progress != nil {
			p.Progress("wrmf epochs", e+1, c.epochs)
		}
	}
	if err := t.sweep(ctx, true, true); err != nil {
		return err
	}
	m.cfg, m.f, m.gram = c, f, gram(f.item, f.k)
	return nil
}

// FoldIn returns the exact ALS solution for a user with the given sorted
// history given the fitted item factors (items past them are ignored).
func (m *WRMF) FoldIn(history []uint32) []float64 {
	history = m.f.clip(history)
	u := make([]float64, m.f.k)
	if len(history) == 0 {
		return u
	}
	newALSSolver(&m.cfg).exact(m.gram, history, m.f.item, u)
	return u
}

func (m *WRMF) Score(history []uint32, scores []float64) { m.ScoreUser(-1, history, scores) }

// ScoreUser scores with user self's fitted factor when history is its
// training row, else with a fold-in (recsys.UserScorer).
func (m *WRMF) ScoreUser(self int, history []uint32, scores []float64) {
	m.f.scoreUser(self, history, scores, m.FoldIn)
}

func (m *WRMF) MarshalBinary() ([]byte, error) {
	return marshalFactors(m.Name(), m.cfg.params(), &m.f), nil
}

func (m *WRMF) UnmarshalBinary(data []byte) error {
	ps, f, err := unmarshalFactors(data, m.Name(), 6)
	if err != nil {
		return err
	}
	c := wrmfConfig{factors: int(ps[0]), alpha: ps[1], lambda: ps[2], epochs: int(ps[3]), cg: int(ps[4]), seed: uint64(ps[5])}
	if f.bias != nil || c.factors != f.k || c.alpha < 0 || c.lambda <= 0 || ps[3] < 0 || ps[4] < 0 || ps[5] < 0 {
		return errCorrupt
	}
	m.cfg, m.f, m.gram = c, *f, gram(f.item, f.k)
	return nil
}
