package mf

import (
	"context"
	"math"
	"math/rand/v2"

	"github.com/recsys-engine/recsys/recsys"
)

// IALS is implicit alternating least squares as Rendle et al. (2022,
// "Revisiting the performance of iALS on item recommendation benchmarks")
// state and tune it: ŷᵤᵢ = wᵤ·hᵢ minimising
// their loss with frequency-scaled regularisation
//
//	Σ_{(u,i)∈S} (ŷᵤᵢ − 1)² + α₀ Σᵤ Σᵢ ŷᵤᵢ²
//	  + λ(Σᵤ (|Iᵤ| + α₀|I|)^ν ‖wᵤ‖² + Σᵢ (|Uᵢ| + α₀|U|)^ν ‖hᵢ‖²),
//
// so that with H fixed user u solves (α₀HᵀH + Σᵢ∈Iᵤ hᵢhᵢᵀ + λᵤI) wᵤ =
// Σᵢ∈Iᵤ hᵢ, λᵤ = λ(|Iᵤ| + α₀|I|)^ν, and items likewise. It is WRMF's
// problem (wrmf.go) with α = 1/α₀ up to the scale of the targets, except
// for the regularisation, which grows with a row's weight instead of being
// one λ for all: with ν = 1 a user with many items is held as firmly as
// its data term, and a rare item is not left free to fit its few users.
// The initial factors are N(0, σ²/d) as the paper advises (σ = 0.1
// scaled by 1/√d keeps the initial scores small at any d). Each epoch
// takes a few CG steps per row warm-started from the previous factors
// (Takács et al. 2011), so an
// epoch costs O(|S|·d + (|U| + |I|)·d²) per step instead of the exact
// solve's O(|S|·d² + (|U| + |I|)·d³); the fit ends with an exact user
// sweep, which is what FoldIn computes for any history.
//
// Params: K factors (DefaultFactors); Extra keys "alpha0" (α₀, 0.1),
// "lambda" (0.01), "nu" (ν, 1), "epochs" (16), "cg" (CG steps per
// solve, 3; 0 solves every sweep exactly), "sigma" (0.1) and "seed" (1).
type IALS struct {
	cfg  ialsConfig
	f    factors
	gram []float64 // HᵀH for fold-ins
}

type ialsConfig struct {
	factors                int
	alpha0, lambda, nu, sd float64
	epochs, cg             int
	seed                   uint64
}

func (c ialsConfig) params() []float64 {
	return []float64{float64(c.factors), c.alpha0, c.lambda, c.nu, float64(c.epochs), float64(c.cg), c.sd, float64(c.seed)}
}

func ialsConfigFrom(p recsys.Params) (ialsConfig, error) {
	k, err := numFactors(p)
	if err != nil {
		return ialsConfig{}, err
	}
	e := extras{m: p.Extra}
	c := ialsConfig{
		factors: k,
		alpha0:  e.float("alpha0", 0.1, 0, 1e6),
		lambda:  e.float("lambda", 0.01, 1e-12, 1e9),
		nu:      e.float("nu", 1, 0, 2),
		epochs:  e.int("epochs", ialsEpochs, 0, 1e6),
		cg:      e.int("cg", 3, 0, 1e6),
		sd:      e.float("sigma", 0.1, 0, 10),
		seed:    uint64(e.int("seed", 1, 0, 1<<53)),
	}
	return c, e.err
}

// weights is the problem in the shared ALS form (als.go).
func (c *ialsConfig) weights() alsWeights {
	return alsWeights{gram: c.alpha0, pos: 1, rhs: 1, lambda: c.lambda, nu: c.nu, unobs: c.alpha0}
}

func (m *IALS) Name() string { return "ials" }

// Params reports the hyper-parameters for recsys.ParamsOf.
func (m *IALS) Params() map[string]float64 {
	c := m.cfg
	return map[string]float64{"factors": float64(c.factors), "alpha0": c.alpha0, "lambda": c.lambda, "nu": c.nu, "epochs": float64(c.epochs)}
}

func newIALSTrainer(x *recsys.Matrix, c *ialsConfig, f *factors) *alsTrainer {
	f.init(x, c.factors, false)
	rng := rand.New(rand.NewPCG(c.seed, 0x69616c73))
	sd := c.sd / math.Sqrt(float64(c.factors))
	gaussian(rng, f.item, sd)
	gaussian(rng, f.user, sd)
	return &alsTrainer{w: c.weights(), cgSteps: c.cg, f: f, x: x}
}

// Fit alternates the configured epochs, then solves the users exactly.
func (m *IALS) Fit(ctx context.Context, x *recsys.Matrix, p recsys.Params) error {
	c, err := ialsConfigFrom(p)
	if err != nil {
		return err
	}
	var f factors
	if err := newIALSTrainer(x, &c, &f).fit(ctx, c.epochs, "ials epochs", p.Progress); err != nil {
		return err
	}
	m.cfg, m.f, m.gram = c, f, gram(f.item, f.k)
	return nil
}

// FoldIn returns the exact ALS solution for a user with the given sorted
// history given the fitted item factors (items past them are ignored).
func (m *IALS) FoldIn(history []uint32) []float64 {
	return alsFoldIn(m.cfg.weights(), &m.f, m.gram, history)
}

func (m *IALS) Score(history []uint32, scores []float64) { m.ScoreUser(-1, history, scores) }

// ScoreUser scores with user self's fitted factor when history is its
// training row, else with a fold-in (recsys.UserScorer).
func (m *IALS) ScoreUser(self int, history []uint32, scores []float64) {
	m.f.scoreUser(self, history, scores, m.FoldIn)
}

func (m *IALS) MarshalBinary() ([]byte, error) {
	return marshalFactors(m.Name(), m.cfg.params(), &m.f), nil
}

func (m *IALS) UnmarshalBinary(data []byte) error {
	ps, f, err := unmarshalFactors(data, m.Name(), 8)
	if err != nil {
		return err
	}
	c := ialsConfig{factors: int(ps[0]), alpha0: ps[1], lambda: ps[2], nu: ps[3], epochs: int(ps[4]), cg: int(ps[5]), sd: ps[6], seed: uint64(ps[7])}
	if f.bias != nil || c.factors != f.k || c.alpha0 < 0 || c.lambda <= 0 || c.nu < 0 || c.nu > 2 || ps[4] < 0 || ps[5] < 0 || c.sd < 0 || ps[7] < 0 {
		return errCorrupt
	}
	m.cfg, m.f, m.gram = c, *f, gram(f.item, f.k)
	return nil
}
