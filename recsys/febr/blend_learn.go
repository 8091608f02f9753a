package febr

import (
	"context"
	"math/rand/v2"
	"slices"
	"strconv"
)

// learn runs OPT-ADG on the stack from the best single base (θ = 1 on
// the base whose held-out ADG is highest), for o.Iterations iterations
// (averaged SGD, trainSet.optADG), with o's λ, η, γ and seed.
func (st *blendStack) learn(ctx context.Context, o Options) (optResult, error) {
	o.Validation = nil
	theta0, err := st.bestSingle(ctx)
	if err != nil {
		return optResult{}, err
	}
	return st.ts.optADG(ctx, theta0, o.optConfig(nil), nil)
}

// bestSingle is the one-hot θ of the base whose held-out ADG on the
// stack's sample is highest.
func (st *blendStack) bestSingle(ctx context.Context) ([]float64, error) {
	dim := st.ts.ext.dim
	best, bestADG := make([]float64, dim), -1.0
	for b := range dim {
		theta := make([]float64, dim)
		theta[b] = 1
		adg, err := st.adg(ctx, theta)
		if err != nil {
			return nil, err
		}
		if adg > bestADG {
			best, bestADG = theta, adg
		}
	}
	return best, nil
}

// ascend maximises the held-out ADG estimate (adg) over θ directly by
// coordinate ascent from theta0: every weight in turn moves by ±step while
// that raises the estimate, the step halving after a round without a
// move, until it is below minStep or rounds run out. The ADG is a step
// function of θ, which a gradient cannot follow; with one weight per base
// (a handful) the search is cheap. It is the listwise alternative to
// OPT-ADG's surrogate (docs/evaluation.md "febr-blend's search").
func (st *blendStack) ascend(ctx context.Context, theta0 []float64) ([]float64, float64, error) {
	theta := slices.Clone(theta0)
	cur, err := st.adg(ctx, theta)
	if err != nil {
		return nil, 0, err
	}
	const minStep, rounds = 0.02, 40
	step := 0.5
	for r := 0; r < rounds && step >= minStep; r++ {
		moved := false
		for b := range theta {
			for _, sign := range []float64{1, -1} {
				try := slices.Clone(theta)
				try[b] += sign * step
				adg, err := st.adg(ctx, try)
				if err != nil {
					return nil, 0, err
				}
				if adg > cur {
					theta, cur, moved = try, adg, true
					break
				}
			}
		}
		if !moved {
			step /= 2
		}
	}
	return theta, cur, nil
}

// learnDirect learns θ on the stack: OPT-ADG per λ of lambdas, then the
// direct search (ascend) from each of its θ and from the best single base;
// the learnt θ is the direct one with the highest held-out ADG (OPT-ADG's
// own θ rank below it there and on test items: docs/evaluation.md "febr-blend's search"). It
// returns it and the OPT-ADG trials.
func (st *blendStack) learnDirect(ctx context.Context, o Options, lambdas []float64, onFit func()) (BlendTrial, []BlendTrial, error) {
	start, err := st.bestSingle(ctx)
	if err != nil {
		return BlendTrial{}, nil, err
	}
	starts := [][]float64{start}
	var trials []BlendTrial
	for _, lambda := range lambdas {
		ol := o
		ol.Lambda = lambda
		res, err := st.learn(ctx, ol)
		if err != nil {
			return BlendTrial{}, nil, err
		}
		trials = append(trials, BlendTrial{Label: "opt-adg λ=" + strconv.FormatFloat(lambda, 'g', -1, 64), Theta: res.theta})
		starts = append(starts, res.theta)
		if onFit != nil {
			onFit()
		}
	}
	learnt := BlendTrial{Label: "direct", HeldOutADG: -1}
	for _, t0 := range starts {
		theta, adg, err := st.ascend(ctx, t0)
		if err != nil {
			return BlendTrial{}, nil, err
		}
		if adg > learnt.HeldOutADG {
			learnt.Theta, learnt.HeldOutADG = theta, adg
		}
	}
	for k := range trials {
		if trials[k].HeldOutADG, err = st.adg(ctx, trials[k].Theta); err != nil {
			return BlendTrial{}, nil, err
		}
	}
	return learnt, trials, nil
}

// crossFitADG is the held-out ADG of learnDirect's θ scored on users it
// was not learnt on: the eligible users split in two halves by a shuffle
// seeded with o.Seed, θ learnt on each half (learnDirect) and scored on
// the other, the mean over all their positives. The learnt θ's own
// held-out ADG is measured on the items it was fitted on, so it is biased
// up against a base alone's, which learns nothing there; this estimate is
// not (and, learnt on half the users, if anything biased down). With
// fewer than two users, the learnt θ's held-out ADG is all there is.
func (st *blendStack) crossFitADG(ctx context.Context, o Options, lambdas []float64) (float64, error) {
	users := slices.Clone(st.ts.eligible)
	if len(users) < 2 {
		learnt, _, err := st.learnDirect(ctx, o, lambdas, nil)
		return learnt.HeldOutADG, err
	}
	rng := rand.New(rand.NewPCG(o.Seed, 0xc2055))
	rng.Shuffle(len(users), func(a, b int) { users[a], users[b] = users[b], users[a] })
	halves := [2][]int32{users[:len(users)/2], users[len(users)/2:]}
	for _, h := range halves {
		slices.Sort(h)
	}
	sum, n := 0.0, 0
	for h := range halves {
		fit, _, err := st.on(halves[h]).learnDirect(ctx, o, lambdas, nil)
		if err != nil {
			return 0, err
		}
		s, c, err := st.on(halves[1-h]).adgSum(ctx, fit.Theta)
		if err != nil {
			return 0, err
		}
		sum, n = sum+s, n+c
	}
	if n == 0 {
		return 0, nil
	}
	return sum / float64(n), nil
}
