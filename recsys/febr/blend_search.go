package febr

import (
	"context"
	"fmt"
	"math"

	"github.com/recsys-engine/recsys/recsys"
	"github.com/recsys-engine/recsys/recsys/metrics"
)

// blendCandidates lists the fits of the blend's search: every base's own
// candidates, then one OPT-ADG run per λ.
func blendCandidates(g recsys.Grid, c recsys.Caps) []recsys.Params {
	var out []recsys.Params
	for _, name := range blendBases(nil) {
		if k, err := recsys.KindOf(name); err == nil && k.Candidates != nil {
			out = append(out, k.Candidates(g, c)...)
		}
	}
	for _, l := range blendLambdas(g) {
		out = append(out, recsys.Params{Options: &Options{Lambda: l}})
	}
	return out
}

func blendLambdas(g recsys.Grid) []float64 {
	if len(g.Lambda) > 0 {
		return g.Lambda
	}
	return DefaultBlendLambdas
}

// searchBlend is febr-blend's search on x: (1) every base's grid, each
// chosen by its validation ADG as recsys/eval's Tune chooses (bo.Search);
// (2) the chosen bases refitted on x less a held-out share of every
// user's positives, θ learnt on the held-out items (learnDirect); (3)
// between that θ and the one-hot θ of every base alone, the one with the
// highest ADG over all the held-out evidence (pooledADG): the held-out
// positives, the learnt θ's estimate there cross-fitted (crossFitADG) so
// that it is not scored on the items it was fitted on, and the validation
// positives.
func searchBlend(ctx context.Context, x *recsys.Matrix, val [][]uint32, g recsys.Grid, c recsys.Caps, p recsys.Params, onFit func()) (recsys.Choice, error) {
	o, bo, names, err := blendSetup(p)
	if err != nil {
		return recsys.Choice{}, err
	}
	params := make([]recsys.Params, len(names))
	onX := make([]recsys.Model, len(names))
	for b, name := range names {
		if m := bo.fitted(x, b); m != nil {
			onX[b], params[b] = m, bo.Params[b]
			continue
		}
		search := searchBase
		if bo.Search != nil {
			search = bo.Search
		}
		m, bp, err := search(ctx, x, val, name, g, c, p.Cache, onFit)
		if err != nil {
			return recsys.Choice{}, err
		}
		onX[b], params[b] = m, bp
	}
	var st *blendStack
	if held := bo.heldOut(x, len(names), val); held != nil {
		st, err = blendStackOf(ctx, held, onX, negatives(bo), o.Seed)
	} else {
		st, err = newBlendStack(ctx, x, names, params, bo, o.Seed)
	}
	if err != nil {
		return recsys.Choice{}, err
	}
	lambdas := blendLambdas(g)
	learnt, trials, err := st.learnDirect(ctx, o, lambdas, onFit)
	if err != nil {
		return recsys.Choice{}, err
	}
	cross, err := st.crossFitADG(ctx, o, lambdas)
	if err != nil {
		return recsys.Choice{}, err
	}
	nHeld := st.heldOut()
	nVal := 0
	for u := range min(len(val), x.Users()) {
		nVal += len(val[u])
	}
	// The choice: the learnt θ or a base alone.
	chosen := []BlendTrial{learnt}
	for b, name := range names {
		t := make([]float64, len(names))
		t[b] = 1
		adg, err := st.adg(ctx, t)
		if err != nil {
			return recsys.Choice{}, err
		}
		chosen = append(chosen, BlendTrial{Label: name, Theta: t, HeldOutADG: adg, CrossFitADG: adg})
	}
	chosen[0].CrossFitADG = cross
	thetas := make([][]float64, len(chosen))
	for k := range chosen {
		thetas[k] = chosen[k].Theta
	}
	vals, ranks, err := blendValidationADGs(ctx, onX, thetas, x, val)
	if err != nil {
		return recsys.Choice{}, err
	}
	var (
		best      *Blend
		bestADG   = math.Inf(-1)
		bestVal   float64
		bestRanks [][]int
	)
	for k := range chosen {
		tr := &chosen[k]
		m := &Blend{}
		m.set(names, onX, params, tr.Theta, x.Items())
		tr.ValidationADG = vals[k]
		tr.PooledADG = pooledADG(tr.CrossFitADG, nHeld, tr.ValidationADG, nVal)
		if tr.PooledADG > bestADG {
			best, bestADG, bestVal, bestRanks = m, tr.PooledADG, tr.ValidationADG, ranks[k]
		}
	}
	trials = append(trials, chosen...)
	best.info.Trials = trials
	fixed := o
	fixed.Validation, fixed.SLIM = nil, nil
	fixed.Blend = &BlendOptions{Bases: names, Params: best.params, Theta: best.theta}
	refit := recsys.Params{Options: &fixed}
	return recsys.Choice{Model: best, Params: refit, Refit: refit, ValidationADG: bestVal, ValidationRanks: bestRanks}, nil
}

// blendValidationADGs is modelValidationADG of the blend of bases under
// each θ of thetas, in one pass over the validation users: each base's
// z-scores of a user are computed once for every θ (the search compares
// its learnt θ with each base alone, eight blends of the same seven fits,
// and scoring the bases is most of a validation pass). The
// scores are summed in Blend.ScoreUser's order, so every mean is the one
// modelValidationADG gives, bit for bit. ranks[k][u] are user u's
// validation ranks under thetas[k], RankHeldOut's.
func blendValidationADGs(ctx context.Context, bases []recsys.Model, thetas [][]float64, x *recsys.Matrix, val [][]uint32) (adg []float64, ranks [][][]int, err error) {
	nu, ni := x.Users(), x.Items()
	used := make([]bool, len(bases))
	for _, theta := range thetas {
		for b, w := range theta {
			used[b] = used[b] || w != 0
		}
	}
	// adgs[k][u] is user u's ADG under thetas[k], summed in user order
	// below as modelValidationADG sums its ranks.
	adgs := make([][]float64, len(thetas))
	ranks = make([][][]int, len(thetas))
	for k := range adgs {
		adgs[k], ranks[k] = make([]float64, nu), make([][]int, nu)
	}
	ranker := recsys.NewRanker(x.Popularity(), ni)
	err = recsys.ParallelFor(ctx, nu, 16, "", nil, func() func(lo, hi int) {
		raw, scores := make([]float64, ni), make([]float64, ni)
		mark := make([]bool, ni)
		z := make([][]float64, len(bases))
		for b := range z {
			if used[b] {
				z[b] = make([]float64, ni)
			}
		}
		return func(lo, hi int) {
			for u := lo; u < hi; u++ {
				if u >= len(val) || len(val[u]) == 0 {
					continue
				}
				hist := x.Row(u)
				markHistory(mark, hist, true)
				for b, base := range bases {
					if used[b] {
						zscoreBase(base, u, hist, mark, raw, z[b])
					}
				}
				markHistory(mark, hist, false)
				for k, theta := range thetas {
					clear(scores)
					for b, w := range theta {
						if w == 0 {
							continue
						}
						for i, v := range z[b] {
							scores[i] += w * v
						}
					}
					ranks[k][u] = ranker.Ranks(scores, hist, val[u])
					adgs[k][u] = metrics.ADG(ranks[k][u])
				}
			}
		}
	})
	if err != nil {
		return nil, nil, err
	}
	adg = make([]float64, len(thetas))
	for k := range thetas {
		sum, users := 0.0, 0
		for u := range min(nu, len(val)) {
			if len(val[u]) > 0 {
				sum += adgs[k][u]
				users++
			}
		}
		if users > 0 {
			adg[k] = sum / float64(users)
		}
	}
	return adg, ranks, ctx.Err()
}

// pooledADG is the mean ADG over nHeld held-out and nVal validation
// positives whose means are held and val: the estimate of a θ's ADG on
// all the items the search holds out, weighted by their number.
func pooledADG(held float64, nHeld int, val float64, nVal int) float64 {
	if nHeld+nVal == 0 {
		return 0
	}
	return (held*float64(nHeld) + val*float64(nVal)) / float64(nHeld+nVal)
}

// searchBase chooses one base's parameters among its kind's candidates by
// the validation ADG, the first of equals, warm-starting consecutive
// candidates that differ in ℓ1 only (as recsys/eval's Tune does).
func searchBase(ctx context.Context, x *recsys.Matrix, val [][]uint32, name string, g recsys.Grid, c recsys.Caps, cache *recsys.NeighbourCache, onFit func()) (recsys.Model, recsys.Params, error) {
	kind, err := recsys.KindOf(name)
	if err != nil {
		return nil, recsys.Params{}, err
	}
	if kind.Search != nil {
		return nil, recsys.Params{}, fmt.Errorf("febr: %s cannot be a base of %s", name, BlendName)
	}
	var cands []recsys.Params
	if kind.Candidates != nil {
		cands = kind.Candidates(g, c)
	}
	if len(cands) == 0 {
		cands = []recsys.Params{{}}
	}
	var (
		best     recsys.Model
		bestP    recsys.Params
		bestADG  = -1.0
		prev     recsys.Model
		prevP    recsys.Params
		havePrev bool
	)
	for _, cp := range cands {
		m := kind.New()
		fp := cp
		fp.Cache = cache
		if havePrev && prevP.K == cp.K && prevP.L2 == cp.L2 {
			fp.Init = prev
		}
		if err := m.Fit(ctx, x, fp); err != nil {
			return nil, recsys.Params{}, fmt.Errorf("febr: %s base %s: %w", BlendName, name, err)
		}
		adg, err := modelValidationADG(ctx, m, x, val)
		if err != nil {
			return nil, recsys.Params{}, err
		}
		if adg > bestADG {
			best, bestP, bestADG = m, cp, adg
		}
		prev, prevP, havePrev = m, cp, true
		if onFit != nil {
			onFit()
		}
	}
	return best, bestP, nil
}
