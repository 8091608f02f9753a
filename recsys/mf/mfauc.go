package mf

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"

	"github.com/recsys-engine/recsys/recsys"
)

// MFAUC is matrix factorisation for (local) AUC, seed 003 §2: it minimises
// Eq. 3,
//
//	θ = 1/m Σᵢ Σ_p∈ωᵢ g(p) φ(Σ_q∈ω̄ᵢ L(uᵢ·v_p − uᵢ·v_q) g′(q)) + λ/2 (‖U‖²/m + ‖V‖²/n),
//
// with one of the losses L of §2.1, φ the identity or tanh(ρx) (the local
// AUC weighting that favours the top of the list), and the item
// distributions g(y) ∝ p̂(y)^τ on the relevant and g′(y) ∝ (1 − p̂(y))^τ on
// the irrelevant items of each user, p̂(y) = c(y)/m (τ = 0: uniform).
//
// Optimisation (§2.2, Algorithm 1): SGD whose gradients are estimated from
// κ_Y relevant and κ_Y irrelevant items per user and, for an item, from κ_W
// users (stratified: half among the item's users, half among the others,
// each half weighted by its share). Steps follow m·∂θ/∂uᵢ and n·∂θ/∂vⱼ:
// the same stationary points, with gradients of order one. An iteration is
// the parallel blockwise scheme of §2.2.1: users and items are dealt at
// random into d row and d column blocks, and in each of d rounds the d
// blocks (R_w, C_(w+r) mod d), which share no row or column, run
// concurrently on GOMAXPROCS goroutines, each taking ⌈max(|R_w|, |C_b|)/d⌉
// row-and-column steps with relevant and irrelevant items restricted to
// the block; an iteration thus takes about max(m, n) steps and updates
// every row and column at least once, and d = 1 is Algorithm 1 itself. The returned factors are the averages of the
// iterates of the iterations after T₀ (average SGD). The run stops after T
// iterations, or earlier when the objective estimate (the mean sampled
// user term of an iteration plus the regulariser) changes by less than tol.
// Blocks and their random streams are fixed by the seed, not by the
// number of goroutines, so the same seed gives the same model everywhere.
//
// Params: K factors (DefaultFactors); Extra keys "loss" (a Loss number,
// default Logistic), "beta" (β, 1), "rho" (ρ of tanh, 0: φ is the
// identity), "lambda" (λ, 0.1), "lr" (α: 2 for the logistic and sigmoid
// losses, whose derivatives are bounded by β, 0.5 for the square ones),
// "epochs" (T, 30),
// "avg_start" (T₀, T/2), "tau" (τ, 0), "kappa_w" (κ_W, 16), "kappa_y"
// (κ_Y, 10), "blocks" (d, 4), "tol" (0: run T iterations) and "seed" (1).
//
// Fold-in: SGD on the user's factor alone with V fixed, the same sampled
// gradient over the whole catalogue, as many steps as a training user took
// on average (at least 200, at most 4000), seeded by the history, returning
// the mean of the second half's iterates.
type MFAUC struct {
	cfg       aucConfig
	f         factors
	phat      []float64 // p̂(y), kept when τ ≠ 0 for the fold-in weights
	negCum    []float64 // cumulative g′ weights over all items (τ ≠ 0)
	foldSteps int
	trace     []float64 // the objective estimate of every iteration of Fit
}

type aucConfig struct {
	factors          int
	obj              objective
	lambda, lr       float64
	epochs, avgStart int
	tau              float64
	kappaW, kappaY   int
	blocks           int
	tol              float64
	seed             uint64
}

const aucParams = 15

func (c aucConfig) params(foldSteps int) []float64 {
	return []float64{float64(c.factors), float64(c.obj.loss), c.obj.beta, c.obj.rho, c.lambda, c.lr,
		float64(c.epochs), float64(c.avgStart), c.tau, float64(c.kappaW), float64(c.kappaY),
		float64(c.blocks), c.tol, float64(c.seed), float64(foldSteps)}
}

func aucConfigFrom(p recsys.Params) (aucConfig, error) {
	k, err := numFactors(p)
	if err != nil {
		return aucConfig{}, err
	}
	e := extras{m: p.Extra}
	c := aucConfig{
		factors: k,
		obj: objective{
			loss: Loss(e.int("loss", int(Logistic), 0, int(Logistic))),
			beta: e.float("beta", 1, 1e-9, 1e6),
			rho:  e.float("rho", 0, 0, 1e6),
		},
		lambda: e.float("lambda", 0.1, 0, 1e6),
		epochs: e.int("epochs", mfaucEpochs, 0, 1e6),
		tau:    e.float("tau", 0, 0, 100),
		kappaW: e.int("kappa_w", 16, 1, maxKappa),
		kappaY: e.int("kappa_y", 10, 1, maxKappa),
		blocks: e.int("blocks", 4, 1, 256),
		tol:    e.float("tol", 0, 0, 1e9),
		seed:   uint64(e.int("seed", 1, 0, 1<<53)),
	}
	// The square losses have unbounded derivatives and need smaller steps.
	lr := 2.0
	if c.obj.loss == Square || c.obj.loss == SquareHinge {
		lr = 0.5
	}
	c.lr = e.float("lr", lr, 1e-12, 100)
	c.avgStart = e.int("avg_start", c.epochs/2, 0, 1e6)
	return c, e.err
}

func (m *MFAUC) Name() string { return "mfauc" }

// Params reports the hyper-parameters for recsys.ParamsOf (the sampling
// and block sizes only when they are not the defaults).
func (m *MFAUC) Params() map[string]float64 {
	c := m.cfg
	out := map[string]float64{"factors": float64(c.factors), "loss": float64(c.obj.loss), "beta": c.obj.beta,
		"rho": c.obj.rho, "lambda": c.lambda, "lr": c.lr, "epochs": float64(c.epochs), "tau": c.tau}
	def, _ := aucConfigFrom(recsys.Params{})
	if c.kappaW != def.kappaW || c.kappaY != def.kappaY || c.blocks != def.blocks {
		out["kappa_w"], out["kappa_y"], out["blocks"] = float64(c.kappaW), float64(c.kappaY), float64(c.blocks)
	}
	return out
}

// Trace returns the objective estimate of every iteration of the last Fit
// (not kept by MarshalBinary).
func (m *MFAUC) Trace() []float64 { return m.trace }

// Fit runs Algorithm 1 with the blockwise iterations of §2.2.1.
func (m *MFAUC) Fit(ctx context.Context, x *recsys.Matrix, p recsys.Params) error {
	c, err := aucConfigFrom(p)
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(c.seed, 0x6d66617563))
	var f factors
	t := newAUCTrainer(x, &c, &f, rng)
	scratch := make([]*aucScratch, min(t.d, runtime.GOMAXPROCS(0)))
	for g := range scratch {
		scratch[g] = newAUCScratch(c.factors, c.kappaY)
	}
	var avgU, avgV []float64
	averaged := 0
	var trace []float64
	for s := range c.epochs {
		obj, err := t.epoch(ctx, rng, scratch)
		if err != nil {
			return err
		}
		if norm := dot(f.user, f.user) + dot(f.item, f.item); math.IsNaN(obj+norm) || math.IsInf(obj+norm, 0) {
			return fmt.Errorf("mfauc: diverged at iteration %d; lower the learning rate (lr = %g)", s+1, c.lr)
		}
		trace = append(trace, obj)
		if s+1 > c.avgStart {
			if averaged == 0 {
				avgU, avgV = make([]float64, len(f.user)), make([]float64, len(f.item))
			}
			averaged++
			w := 1 / float64(averaged)
			for k, v := range f.user {
				avgU[k] += w * (v - avgU[k])
			}
			for k, v := range f.item {
				avgV[k] += w * (v - avgV[k])
			}
		}
		if p.Progress != nil {
			p.Progress("mfauc iterations", s+1, c.epochs)
		}
		if c.tol > 0 && s > 0 && math.Abs(trace[s]-trace[s-1]) < c.tol {
			break
		}
	}
	if averaged > 0 {
		f.user, f.item = avgU, avgV
	}
	// A training user took about T·⌈max(m, n)/m⌉ steps.
	steps := 200
	if nu, ni := x.Users(), x.Items(); nu > 0 {
		steps = min(max(c.epochs*((max(nu, ni)+nu-1)/nu), 200), 4000)
	}
	phat, _, wNeg := itemWeights(x, c.tau)
	m.cfg, m.f, m.phat, m.foldSteps, m.trace = c, f, phat, steps, trace
	m.negCum = cumulative(wNeg)
	return nil
}

func cumulative(w []float64) []float64 {
	if w == nil {
		return nil
	}
	out := make([]float64, len(w))
	s := 0.0
	for i, v := range w {
		s += v
		out[i] = s
	}
	return out
}

// FoldIn returns the factor of a user with the given sorted history (items
// past the fitted ones are ignored): see the type's comment.
func (m *MFAUC) FoldIn(history []uint32) []float64 {
	history = m.f.clip(history)
	k, n := m.f.k, m.f.nItems
	u, avg := make([]float64, k), make([]float64, k)
	if len(history) == 0 || len(history) >= n {
		return u
	}
	c := &m.cfg
	rng := foldRNG(c.seed, history)
	s := newAUCScratch(k, c.kappaY)
	var posCum []float64
	if m.phat != nil {
		posCum = make([]float64, len(history))
		sum := 0.0
		for j, i := range history {
			sum += math.Pow(m.phat[i], c.tau)
			posCum[j] = sum
		}
	}
	half := m.foldSteps / 2
	for step := range m.foldSteps {
		pos := s.pos[:0]
		for range c.kappaY {
			j := rng.IntN(len(history))
			if posCum != nil {
				j = sampleCum(rng, posCum, posCum[len(posCum)-1])
			}
			pos = append(pos, history[j])
		}
		neg := s.neg[:0]
		for range c.kappaY {
			for range 32 {
				q := uint32(rng.IntN(n))
				if m.negCum != nil {
					q = uint32(sampleCum(rng, m.negCum, m.negCum[n-1]))
				}
				if !contains(history, q) {
					neg = append(neg, q)
					break
				}
			}
		}
		if len(neg) > 0 {
			s.userGrad(c, &m.f, u, pos, neg, false)
			axpy(-c.lr, s.grad, u)
		}
		if step >= half {
			axpy(1/float64(m.foldSteps-half), u, avg)
		}
	}
	return avg
}

func (m *MFAUC) Score(history []uint32, scores []float64) { m.ScoreUser(-1, history, scores) }

// ScoreUser scores with user self's fitted factor when history is its
// training row, else with a fold-in (recsys.UserScorer).
func (m *MFAUC) ScoreUser(self int, history []uint32, scores []float64) {
	m.f.scoreUser(self, history, scores, m.FoldIn)
}

func (m *MFAUC) MarshalBinary() ([]byte, error) {
	e := newEncoder(m.Name(), m.cfg.params(m.foldSteps))
	e.Uvarint(uint64(len(m.phat)))
	e.Float64s(m.phat)
	writeFactors(e, &m.f)
	return e.Bytes(), nil
}

func (m *MFAUC) UnmarshalBinary(data []byte) error {
	d, ps := newDecoder(data, m.Name(), aucParams)
	nPhat := d.Count(8)
	phat := d.Finites(nPhat)
	f := readFactors(d)
	if err := d.Finish(); err != nil {
		return err
	}
	for _, v := range ps {
		if v < 0 {
			return errCorrupt
		}
	}
	c := aucConfig{factors: int(ps[0]), obj: objective{loss: Loss(ps[1]), beta: ps[2], rho: ps[3]}, lambda: ps[4], lr: ps[5],
		epochs: int(ps[6]), avgStart: int(ps[7]), tau: ps[8], kappaW: int(ps[9]), kappaY: int(ps[10]),
		blocks: int(ps[11]), tol: ps[12], seed: uint64(ps[13])}
	foldSteps := int(ps[14])
	if c.factors != f.k || f.bias != nil || c.obj.loss > Logistic || c.kappaY < 1 || c.kappaY > maxKappa || foldSteps > maxFoldSteps ||
		(c.tau == 0) != (nPhat == 0) || (nPhat != 0 && nPhat != f.nItems) {
		return errCorrupt
	}
	if len(phat) == 0 {
		phat = nil
	}
	var negCum []float64
	if phat != nil {
		wPos, wNeg := make([]float64, len(phat)), make([]float64, len(phat))
		weightsFrom(phat, c.tau, wPos, wNeg)
		negCum = cumulative(wNeg)
	}
	m.cfg, m.f, m.phat, m.negCum, m.foldSteps, m.trace = c, *f, phat, negCum, foldSteps, nil
	return nil
}
