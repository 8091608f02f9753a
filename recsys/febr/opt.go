package febr

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/recsys-engine/recsys/recsys"
)

// lossC is C(k) = 1 − 1/log₂(k + 2), dissertation Eq. (4.8): the 1 − ADG
// loss of an item at rank k.
func lossC(k int) float64 { return 1 - 1/math.Log2(float64(k)+2) }

// optConfig are the settings of one OPT-ADG run.
type optConfig struct {
	lambda, eta, gamma float64
	// maxIter caps the iterations; with validation items, training stops
	// earlier when the validation ADG has not improved for patience
	// evaluations, one every evalEvery iterations, and returns the best θ
	// seen. Without them it runs maxIter iterations.
	maxIter, evalEvery, patience int
	validation                   [][]uint32
	seed                         uint64
	progress                     recsys.ProgressFunc
	// trace, when not nil, sees θ, its validation ADG and the number of
	// updates so far at every evaluation (diagnostics).
	trace func(it int, theta []float64, validationADG float64, updates int)
}

// optResult is what an OPT-ADG run returns.
type optResult struct {
	theta []float64
	// iterations is the iteration count at which theta was reached.
	iterations int
	// validationADG is the ADG of theta on the validation items (0 when
	// there were none).
	validationADG float64
	// evaluations is the number of validation evaluations made.
	evaluations int
	// updates counts the iterations that found a violator and stepped on
	// the loss (the others only shrink θ by the ℓ2 term), up to
	// iterations.
	updates int
	// ranks are theta's ranks of every user's validation items, as
	// RankHeldOut ranks them on the validation set's matrix (nil without
	// validation items).
	ranks [][]int
}

// optADG is dissertation Algorithm 4.2 for the linear predictor
// f_θ(u, i) = θ·z(φ(u, i)), starting from theta0:
//
//	repeat: draw u uniformly, i⁺ uniformly from O⁺u; draw i⁻ uniformly from
//	O⁻u until f(u, i⁺) − f(u, i⁻) < 1 (a violator) or ⌈(|I|−1)/γ⌉ draws;
//	on a violator found at draw N, step on
//	C(⌊(|I|−1)/N⌋)·(f(u, i⁻) − f(u, i⁺) + 1) + λ‖θ‖² (Eqs. 4.8, 4.10).
//
// N counts the draws including the violator (Weston et al. 2010), so a
// violator at the first draw weighs C(|I|−1). Negatives are drawn from
// O⁻u (dissertation Eq. 4.10) rather than I \ i⁺: ranking another training
// item above i⁺ costs nothing, as the evaluation leaves training items
// out; |I|−1 is kept in the rank estimate as in the dissertation's
// Algorithm 4.2 (it differs from |O⁻u| by the share of the user's
// positives, a few percent). The draws of a step are made with its user's
// view, ahead of the step (trainSet.draw: the ⌈(|I|−1)/γ⌉ negatives it may
// look at, in order). A negative's features come from the memo (a binary
// search in the user's block; an item outside it has the missing vector)
// or,
// without the memo, are computed for that pair alone from the user's view
// (extractor.pair), to the bit the same: a step costs O(k) per item
// looked at instead of a block of O(Σ_{j ∈ O⁺u} |rev(j)| + |I|) features.
//
// The ℓ2 term is stepped at every iteration (θ ← (1 − 2ηλ)θ). What is
// evaluated and returned is the average θ̄ of the iterates since θ0
// (averaged SGD) rather than the last iterate: with a constant step the
// iterates wander by more than the validation differences early stopping
// and the search compare, the average does not (docs/performance.md,
// "OPT-ADG's averaged iterate"). Users are drawn independently at every
// iteration as in the dissertation's Algorithm 4.2, 64 at a time so that
// their views and draws are prepared in parallel, each step's from a seed
// of its own; the memo and its absence take the same steps (the same θ
// for the same seed).
func (ts *trainSet) optADG(ctx context.Context, theta0 []float64, cfg optConfig, val *trainSet) (optResult, error) {
	dim := ts.ext.dim
	theta := slices.Clone(theta0)
	res := optResult{theta: slices.Clone(theta)}
	rng := rand.New(rand.NewPCG(cfg.seed, 0x0febb))
	nItems := ts.x.Items()
	maxDraws := max(1, int(math.Ceil(float64(nItems-1)/cfg.gamma)))
	decay := 1 - 2*cfg.eta*cfg.lambda
	validate := len(cfg.validation) > 0
	if len(ts.eligible) == 0 {
		return res, ctx.Err()
	}

	// Averaged SGD (Polyak and Juditsky 1992): θ̄, the mean of the
	// iterates since θ0, is what gets evaluated and returned.
	avgSum := slices.Clone(theta)
	avgN := 1.0
	updates := 0
	zp, zn := make([]float64, dim), make([]float64, dim)
	raw := make([]float64, dim)
	// feature returns z(φ(u, i)) (nil when missing), from the memo or
	// computed on demand from the view, into buf.
	feature := func(u int, v *view, i uint32, buf []float64) []float64 {
		if ts.blocks != nil {
			b := &ts.blocks[u]
			if q, ok := slices.BinarySearch(b.items, i); ok {
				return b.row(q, dim)
			}
			return nil
		}
		if !ts.ext.pair(v, ts.pairRows, i, raw) {
			return nil
		}
		ts.ext.zscore(raw, buf)
		return buf
	}
	step := func(u int, v *view) {
		sMiss := dot(theta, ts.zMiss)
		zpos := feature(u, v, v.pos, zp)
		if zpos == nil {
			zpos = ts.zMiss
		}
		sp := dot(theta, zpos)
		missViolates := sp-sMiss < 1
		var zneg []float64
		draws := 0
		for _, i := range v.negs {
			draws++
			z := feature(u, v, i, zn)
			if z == nil {
				if missViolates {
					zneg = ts.zMiss
					break
				}
				continue
			}
			if sp-dot(theta, z) < 1 {
				zneg = z
				break
			}
		}
		for f := range theta {
			theta[f] *= decay
		}
		if zneg != nil {
			updates++
			g := cfg.eta * lossC((nItems-1)/draws)
			for f := range theta {
				theta[f] -= g * (zneg[f] - zpos[f])
			}
		}
		for f := range theta {
			avgSum[f] += theta[f]
		}
		avgN++
	}
	current := func() []float64 {
		out := make([]float64, dim)
		for f := range out {
			out[f] = avgSum[f] / avgN
		}
		return out
	}

	best := -1.0
	bad := 0
	// The ranks of the pass being made; res.ranks holds the best one's.
	var passRanks [][]int
	if validate {
		passRanks, res.ranks = make([][]int, val.x.Users()), make([][]int, val.x.Users())
	}
	evaluate := func(it int) (stop bool, err error) {
		if cfg.progress != nil {
			cfg.progress("febr opt-adg", it, cfg.maxIter)
		}
		if !validate {
			return false, nil
		}
		theta := current()
		// Early stopping compares θs on the users the memo keeps (all of
		// them unless streaming past validationMemo); the first pass
		// fills it.
		clear(passRanks)
		_, adg, err := val.validationPass(ctx, theta, cfg.validation, !val.valFilled, val.valFilled, passRanks)
		if err != nil {
			return true, err
		}
		res.evaluations++
		if cfg.trace != nil {
			cfg.trace(it, theta, adg, updates)
		}
		if adg > best {
			best, bad = adg, 0
			res.theta, res.iterations, res.validationADG, res.updates = slices.Clone(theta), it, adg, updates
			res.ranks, passRanks = passRanks, res.ranks
			return false, nil
		}
		bad++
		return bad >= cfg.patience, nil
	}

	// Users are drawn a batch at a time and their views prepared in
	// parallel (KNN(u) for the user side), then stepped through in order:
	// the same steps as one user at a time.
	const batch = 64 // fixed, so that θ does not depend on the workers
	users, seeds := make([]int, batch), make([]uint64, batch)
	views := make([]view, batch)
	it := 0
	stopped := false
	for it < cfg.maxIter {
		stop, err := evaluate(it)
		if err != nil {
			return res, err
		}
		if stopped = stop; stopped {
			break
		}
		n := min(cfg.evalEvery, cfg.maxIter-it)
		for done := 0; done < n; done += batch {
			nb := min(batch, n-done)
			for k := range nb {
				users[k] = int(ts.eligible[rng.IntN(len(ts.eligible))])
				seeds[k] = rng.Uint64()
			}
			err := recsys.ParallelFor(ctx, nb, 4, "", nil, func() func(lo, hi int) {
				return func(lo, hi int) {
					for k := lo; k < hi; k++ {
						u, v := users[k], &views[k]
						var extra []uint32
						if ts.pos != nil {
							extra = ts.pos[u]
						}
						ts.ext.view(v, u, ts.x.Row(u), extra)
						ts.draw(v, u, maxDraws, seeds[k])
						if ts.blocks == nil {
							ts.ext.lookAt(v, ts.x.Row(u))
						}
					}
				}
			})
			if err != nil {
				return res, err
			}
			for k := range nb {
				step(users[k], &views[k])
			}
		}
		it += n
	}
	if !stopped {
		if _, err := evaluate(it); err != nil {
			return res, err
		}
	}
	if !validate {
		res.theta, res.iterations, res.updates = slices.Clone(current()), it, updates
	} else if val.valMemo != nil && !val.valMemoAll(cfg.validation) {
		// Early stopping saw a sample of the users: the ADG that the search
		// compares across λ and k is over them all, whether early stopping
		// or the iteration cap ended the run (a run that stopped early
		// used to return the sample's ADG).
		var err error
		clear(res.ranks)
		if res.validationADG, _, err = val.validationPass(ctx, res.theta, cfg.validation, false, false, res.ranks); err != nil {
			return res, err
		}
	}
	return res, nil
}

// draw makes a step's draws for user u into v, whose bitsets view has
// set: i⁺ uniformly from O⁺u, then maxDraws negatives uniformly from O⁻u
// (the items outside v.ex, or u's sample of them when the set has one,
// febr-blend), which the step looks at in order until a violator. They
// come from the step's own stream (seed), so that views prepared in
// parallel draw what one after another would, and the user side is then
// accumulated for those items alone (lookAt). A uniform draw from O⁻u
// draws items uniformly until one is outside v.ex: at most a few tries, as
// a history is a small share of the catalogue.
func (ts *trainSet) draw(v *view, u, maxDraws int, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 0x0febb))
	pos := ts.positives(u)
	v.pos = pos[rng.IntN(len(pos))]
	v.negs = slices.Grow(v.negs[:0], maxDraws)
	nItems := ts.x.Items()
	for range maxDraws {
		var i uint32
		if ts.sampled != nil {
			i = ts.sampled[u][rng.IntN(len(ts.sampled[u]))]
		} else {
			i = uint32(rng.IntN(nItems))
			for hasBit(v.ex, i) {
				i = uint32(rng.IntN(nItems))
			}
		}
		v.negs = append(v.negs, i)
	}
}
