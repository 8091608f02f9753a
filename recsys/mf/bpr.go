package mf

import (
	"context"
	"math/rand/v2"
	"unsafe"

	"github.com/recsys-engine/recsys/recsys"
	"github.com/recsys-engine/recsys/recsys/internal/mem"
)

// BPR is Bayesian Personalised Ranking (Rendle et al. 2009; lecture notes
// seed 004): x̂ᵤᵢ = bᵢ + uᵤ·vᵢ, fitted by SGD on triples (u, i, j) drawn
// with (u, i) uniform over the positive pairs and j uniform over the items
// u has not consumed, each step descending
//
//	−ln σ(x̂ᵤᵢ − x̂ᵤⱼ) + λ_U/2‖uᵤ‖² + λ₊/2‖vᵢ‖² + λ₋/2‖vⱼ‖² + λ_b/2(bᵢ² + bⱼ²).
//
// Params: K factors (DefaultFactors); Extra keys "lambda" (all four
// regularisers, 0.0025; "reg_user", "reg_pos", "reg_neg" and "reg_bias"
// override one each), "lr" (0.05), "epochs" (100; an epoch is |X| steps;
// 30 left BPR far behind on sparse data, docs/evaluation.md "Matrix factorisation on sparse data")
// and "seed" (1).
//
// Fold-in: SGD on uᵤ alone with V and b fixed, the same step size and
// λ_U, max(epochs·|history|, 200) steps (at most 20000) on triples drawn
// from the history,
// seeded by the history, returning the mean of the second half's iterates.
// The problem is convex in uᵤ, so this approaches its unique minimiser.
type BPR struct {
	cfg bprConfig
	f   factors
}

type bprConfig struct {
	factors                          int
	lambdaU, lambdaP, lambdaN, lambB float64
	lr                               float64
	epochs                           int
	seed                             uint64
}

func (c bprConfig) params() []float64 {
	return []float64{float64(c.factors), c.lambdaU, c.lambdaP, c.lambdaN, c.lambB, c.lr, float64(c.epochs), float64(c.seed)}
}

func bprConfigFrom(p recsys.Params) (bprConfig, error) {
	k, err := numFactors(p)
	if err != nil {
		return bprConfig{}, err
	}
	e := extras{m: p.Extra}
	lambda := e.float("lambda", 0.0025, 0, 1e6)
	c := bprConfig{
		factors: k,
		lambdaU: e.float("reg_user", lambda, 0, 1e6),
		lambdaP: e.float("reg_pos", lambda, 0, 1e6),
		lambdaN: e.float("reg_neg", lambda, 0, 1e6),
		lambB:   e.float("reg_bias", lambda, 0, 1e6),
		lr:      e.float("lr", 0.05, 1e-12, 10),
		epochs:  e.int("epochs", bprEpochs, 0, 1e6),
		seed:    uint64(e.int("seed", 1, 0, 1<<53)),
	}
	return c, e.err
}

func (m *BPR) Name() string { return "bpr" }

// Params reports the hyper-parameters for recsys.ParamsOf.
func (m *BPR) Params() map[string]float64 {
	c := m.cfg
	out := map[string]float64{"factors": float64(c.factors), "lr": c.lr, "epochs": float64(c.epochs)}
	if c.lambdaU == c.lambdaP && c.lambdaU == c.lambdaN && c.lambdaU == c.lambB {
		out["lambda"] = c.lambdaU
	} else {
		out["reg_user"], out["reg_pos"], out["reg_neg"], out["reg_bias"] = c.lambdaU, c.lambdaP, c.lambdaN, c.lambB
	}
	return out
}

// bprGrad is the loss of one triple and its gradient with respect to uᵤ,
// vᵢ, vⱼ (written to gu, gi, gj) and the biases bᵢ, bⱼ.
func bprGrad(c *bprConfig, u, vi, vj []float64, bi, bj float64, gu, gi, gj []float64) (loss, gbi, gbj float64) {
	x := bprMargin(u, vi, vj, bi, bj)
	s := sigmoid(-x) // −∂(−ln σ(x))/∂x
	loss = softplus(-x) + 0.5*(c.lambdaU*dot(u, u)+c.lambdaP*dot(vi, vi)+c.lambdaN*dot(vj, vj)+c.lambB*(bi*bi+bj*bj))
	for f := range u {
		gu[f] = -s*(vi[f]-vj[f]) + c.lambdaU*u[f]
		gi[f] = -s*u[f] + c.lambdaP*vi[f]
		gj[f] = s*u[f] + c.lambdaN*vj[f]
	}
	return loss, -s + c.lambB*bi, s + c.lambB*bj
}

// bprMargin is x̂ᵤᵢⱼ = bᵢ − bⱼ + uᵤ·(vᵢ − vⱼ), summed in four lanes so
// that the additions of one lane do not wait on the others'.
func bprMargin(u, vi, vj []float64, bi, bj float64) float64 {
	vi, vj = vi[:len(u)], vj[:len(u)]
	var a0, a1, a2, a3 float64
	f := 0
	for ; f+4 <= len(u); f += 4 {
		a0 += u[f] * (vi[f] - vj[f])
		a1 += u[f+1] * (vi[f+1] - vj[f+1])
		a2 += u[f+2] * (vi[f+2] - vj[f+2])
		a3 += u[f+3] * (vi[f+3] - vj[f+3])
	}
	for ; f < len(u); f++ {
		a0 += u[f] * (vi[f] - vj[f])
	}
	return bi - bj + ((a0 + a1) + (a2 + a3))
}

// bprStep is one SGD step on a triple: u, vi, vj and the biases move by
// −lr times bprGrad's gradient, computed and applied in one pass without
// the loss, which training does not use (vi and vj are distinct rows).
func bprStep(c *bprConfig, lr float64, u, vi, vj []float64, bi, bj *float64) {
	vi, vj = vi[:len(u)], vj[:len(u)]
	s := sigmoid(-bprMargin(u, vi, vj, *bi, *bj))
	for f := range u {
		uf, vif, vjf := u[f], vi[f], vj[f]
		u[f] += -lr * (-s*(vif-vjf) + c.lambdaU*uf)
		vi[f] += -lr * (-s*uf + c.lambdaP*vif)
		vj[f] += -lr * (s*uf + c.lambdaN*vjf)
	}
	gbi, gbj := -s+c.lambB**bi, s+c.lambB**bj
	*bi -= lr * gbi
	*bj -= lr * gbj
}

// bprTrainer holds the sampling state of a fit.
type bprTrainer struct {
	c     *bprConfig
	f     *factors
	x     *recsys.Matrix
	src   *rand.PCG
	rng   *rand.Rand // draws from src
	pairs []bprPair  // every positive pair, in row order
	// peek draws from a copy of src what the next steps will draw
	// (ahead).
	peekSrc rand.PCG
	peek    *rand.Rand
}

// bprPair is a positive (user, item); one array of them keeps a drawn
// pair's user and item on one cache line.
type bprPair struct{ user, item uint32 }

func newBPRTrainer(x *recsys.Matrix, c *bprConfig, f *factors) *bprTrainer {
	t := &bprTrainer{c: c, f: f, x: x, src: rand.NewPCG(c.seed, 0x627072)}
	t.rng, t.peek = rand.New(t.src), rand.New(&t.peekSrc)
	f.init(x, c.factors, true)
	// Small random factors, as is usual for BPR (the scale of MyMediaLite
	// and of seed 003 §5.1's initialisation).
	gaussian(t.rng, f.user, 0.1)
	gaussian(t.rng, f.item, 0.1)
	t.pairs = make([]bprPair, 0, x.NNZ())
	for u := range x.Users() {
		for _, i := range x.Row(u) {
			t.pairs = append(t.pairs, bprPair{uint32(u), i})
		}
	}
	return t
}

// negative draws an item outside row uniformly (rejection), or false when
// the row holds (nearly) every item.
func negative(rng *rand.Rand, row []uint32, nItems int) (uint32, bool) {
	if len(row) >= nItems {
		return 0, false
	}
	for range 64 {
		j := uint32(rng.IntN(nItems))
		if !contains(row, j) {
			return j, true
		}
	}
	return 0, false
}

// epoch runs |X| SGD steps (bprStep) on triples drawn with replacement.
func (t *bprTrainer) epoch(ctx context.Context) error {
	n := len(t.pairs)
	for s := range n {
		if s&0xffff == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		p := t.pairs[t.rng.IntN(n)]
		u, i := int(p.user), int(p.item)
		j, ok := negative(t.rng, t.x.Row(u), t.f.nItems)
		t.ahead()
		if !ok {
			continue
		}
		bprStep(t.c, t.c.lr, t.f.userVec(u), t.f.itemVec(i), t.f.itemVec(int(j)), &t.f.bias[i], &t.f.bias[j])
	}
	return nil
}

// ahead prefetches what the next step will most likely touch, and the
// pair of the one after: a step is a few hundred nanoseconds of
// arithmetic on three factor rows, a pair and a history that are all far
// past the caches at 10⁷ positives, each a miss that a load would wait
// for. It draws from a copy of the sampler's state as if each step's
// first negative were accepted (a history is a small share of the
// items), so the steps are the same whatever it guesses; a wrong guess
// costs a wasted prefetch.
func (t *bprTrainer) ahead() {
	t.peekSrc = *t.src
	n, k := len(t.pairs), t.f.k
	next := t.pairs[t.peek.IntN(n)] // prefetched by the step before
	j := t.peek.IntN(t.f.nItems)
	after := t.peek.IntN(n)
	mem.Prefetch(unsafe.Pointer(&t.pairs[after]), 1)
	if row := t.x.Row(int(next.user)); len(row) > 0 {
		mem.Prefetch(unsafe.Pointer(&row[0]), uintptr(min(4*len(row), 1024))) // what a binary search reads, mostly
	}
	const f64 = 8
	mem.Prefetch(unsafe.Pointer(&t.f.user[int(next.user)*k]), uintptr(f64*k))
	mem.Prefetch(unsafe.Pointer(&t.f.item[int(next.item)*k]), uintptr(f64*k))
	mem.Prefetch(unsafe.Pointer(&t.f.item[j*k]), uintptr(f64*k))
}

// Fit runs the configured epochs of SGD.
func (m *BPR) Fit(ctx context.Context, x *recsys.Matrix, p recsys.Params) error {
	c, err := bprConfigFrom(p)
	if err != nil {
		return err
	}
	var f factors
	t := newBPRTrainer(x, &c, &f)
	for e := range c.epochs {
		if err := t.epoch(ctx); err != nil {
			return err
		}
		if p.Progress != nil {
			p.Progress("bpr epochs", e+1, c.epochs)
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	m.cfg, m.f = c, f
	return nil
}

// FoldIn returns the factor of a user with the given sorted history (items
// past the fitted ones are ignored): see the type's comment.
func (m *BPR) FoldIn(history []uint32) []float64 {
	history = m.f.clip(history)
	k := m.f.k
	u, avg := make([]float64, k), make([]float64, k)
	if len(history) == 0 || len(history) >= m.f.nItems {
		return u
	}
	rng := foldRNG(m.cfg.seed, history)
	steps := min(max(m.cfg.epochs*len(history), 200), maxFoldSteps)
	half := steps / 2
	gu := make([]float64, k)
	lr, lam := m.cfg.lr, m.cfg.lambdaU
	for s := range steps {
		i := int(history[rng.IntN(len(history))])
		j, ok := negative(rng, history, m.f.nItems)
		if !ok {
			continue
		}
		vi, vj := m.f.itemVec(i), m.f.itemVec(int(j))
		x := m.f.bias[i] - m.f.bias[j]
		for f := range u {
			x += u[f] * (vi[f] - vj[f])
		}
		sg := sigmoid(-x)
		for f := range u {
			gu[f] = -sg*(vi[f]-vj[f]) + lam*u[f]
		}
		axpy(-lr, gu, u)
		if s >= half {
			axpy(1/float64(steps-half), u, avg)
		}
	}
	return avg
}

func (m *BPR) Score(history []uint32, scores []float64) { m.ScoreUser(-1, history, scores) }

// ScoreUser scores with user self's fitted factor when history is its
// training row, else with a fold-in (recsys.UserScorer).
func (m *BPR) ScoreUser(self int, history []uint32, scores []float64) {
	m.f.scoreUser(self, history, scores, m.FoldIn)
}

func (m *BPR) MarshalBinary() ([]byte, error) {
	return marshalFactors(m.Name(), m.cfg.params(), &m.f), nil
}

func (m *BPR) UnmarshalBinary(data []byte) error {
	ps, f, err := unmarshalFactors(data, m.Name(), 8)
	if err != nil {
		return err
	}
	c := bprConfig{factors: int(ps[0]), lambdaU: ps[1], lambdaP: ps[2], lambdaN: ps[3], lambB: ps[4], lr: ps[5], epochs: int(ps[6]), seed: uint64(ps[7])}
	if f.bias == nil || c.factors != f.k || c.epochs < 0 || c.epochs > 1e6 || ps[7] < 0 || ps[7] > 1<<53 {
		return errCorrupt
	}
	m.cfg, m.f = c, *f
	return nil
}
