package mf

import (
	"context"
	"math/rand/v2"

	"github.com/recsys-engine/recsys/recsys"
)

// WRMF is weighted regularised matrix factorisation for implicit feedback
// (Hu et al. 2008): it minimises
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
		epochs:  e.int("epochs", wrmfEpochs, 0, 1e6),
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

// weights is WRMF's problem in the shared ALS form (als.go): A = G +
// α Σ yᵢyᵢᵀ + λI, b = (1 + α) Σ yᵢ, the same λ on every row.
func (c *wrmfConfig) weights() alsWeights {
	return alsWeights{gram: 1, pos: c.alpha, rhs: 1 + c.alpha, lambda: c.lambda}
}

func newWRMFTrainer(x *recsys.Matrix, c *wrmfConfig, f *factors) *alsTrainer {
	f.init(x, c.factors, false)
	rng := rand.New(rand.NewPCG(c.seed, 0x77726d66))
	gaussian(rng, f.item, 0.1)
	return &alsTrainer{w: c.weights(), cgSteps: c.cg, f: f, x: x}
}

// Fit alternates the configured epochs, then solves the users exactly.
func (m *WRMF) Fit(ctx context.Context, x *recsys.Matrix, p recsys.Params) error {
	c, err := wrmfConfigFrom(p)
	if err != nil {
		return err
	}
	var f factors
	if err := newWRMFTrainer(x, &c, &f).fit(ctx, c.epochs, "wrmf epochs", p.Progress); err != nil {
		return err
	}
	m.cfg, m.f, m.gram = c, f, gram(f.item, f.k)
	return nil
}

// FoldIn returns the exact ALS solution for a user with the given sorted
// history given the fitted item factors (items past them are ignored).
func (m *WRMF) FoldIn(history []uint32) []float64 {
	return alsFoldIn(m.cfg.weights(), &m.f, m.gram, history)
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
