package recsys

import (
	"context"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"sync/atomic"

	"recsys/recsys/metrics"
)

func (b *febrBlock) bytes() int64 { return int64(cap(b.items))*4 + int64(cap(b.feat))*8 }

// febrTrainSet is the data of OPT-ADG for one extractor on one matrix x of
// histories: the z-score statistics and, when they fit in the memory
// budget, every user's feature block (the memo of §4.5.6); without the
// memo, blocks are recomputed per user as training visits them. The
// positives OPT-ADG draws are the rows of x (Algorithm 4.2), or held-out
// items disjoint from them (FEBROptions.Holdout).
type febrTrainSet struct {
	x      *Matrix
	ext    *febrExtractor
	pos    [][]uint32 // nil: the rows of x
	zMiss  []float64
	blocks []febrBlock // nil when streaming
	// sampled, when set, holds each user's sample of O⁻u, the only
	// negatives OPT-ADG draws; every one has a row in the block.
	sampled [][]uint32
	ranker  *Ranker
	// eligible are the users with a positive and a negative item: the
	// users OPT-ADG samples.
	eligible []int32
	// candidates is the number of non-missing (u, i) pairs over all users;
	// memoBytes the size of the memo (or what it would have taken).
	candidates int64
	memoBytes  int64
	// valMemo keeps, when streaming, the blocks of the validation users
	// that the first pass of OPT-ADG found room for, up to
	// febrValidationMemo bytes in all (valBytes); valFilled is set once
	// that pass is done. OPT-ADG's early stopping then ranks those users
	// alone (validationPass).
	valMemo   []*febrBlock
	valBytes  int64
	valFilled bool
	// pairRows are ext.pairRows() when streaming (OPT-ADG's pairs).
	pairRows *Neighbours
}

// febrValidationMemo bounds a streaming training set's memo of validation
// blocks (febrTrainSet.valMemo): at MovieLens-20M's shape, extracting the
// 5,000 validation users' blocks again at every evaluation was two thirds
// of a FEBR search, and their blocks did not all fit in this bound. A
// variable so that tests can exercise the bound.
var febrValidationMemo int64 = 1 << 30

func (ts *febrTrainSet) positives(u int) []uint32 {
	if ts.pos != nil {
		return ts.pos[u]
	}
	return ts.x.Row(u)
}

// febrStatsUsers is how many users' candidates the z-score statistics are
// computed over: a fixed-seed uniform sample of that many users when there
// are more (a variable so that tests can exercise the sample on small
// data). The statistics only centre and scale the features; at 2,000
// users they are means over ~4·10⁷ pairs at MovieLens-20M's shape, where a
// pass over all 142k users costs as much as OPT-ADG itself (5,000 before,
// ~10⁸ pairs: 490 CPU s of the 20M auto run's seven variants). MovieLens
// 100K (943 users) and Last.fm (1,892) take every user.
var febrStatsUsers = 2000

// febrDrawUsers bounds the users OPT-ADG draws from without the memo: a
// fixed-seed uniform sample of that many when there are more (userSample,
// a superset of the statistics' sample; a variable so that tests can
// exercise it). Drawing u uniformly from a uniform sample of U instead of
// from U (Algorithm 4.2) trains on those users' pairs alone: at
// MovieLens-20M's shape, 10,000 users hold ~1.4·10⁶ positives for the 14
// weights of a FEBRiu θ, and the user side searches KNN(u) (~3·10⁶
// operations each) for 10,000 users instead of for most of the 142k (525
// of febr-iu-cosine's 1,118 CPU s at 20M before the sample).
var febrDrawUsers = 10_000

// statsSample returns the users the statistics of a matrix of nu users are
// computed over, ascending: all of them, or febrStatsUsers drawn uniformly
// by a fixed-seed generator.
func statsSample(nu int) []int { return userSample(nu, febrStatsUsers) }

// userSample returns n of nu users drawn uniformly by a fixed-seed
// generator, ascending (all of them when nu ≤ n). A partial Fisher–Yates
// shuffle draws them, so a smaller sample is a subset of a larger one.
func userSample(nu, n int) []int {
	all := make([]int, nu)
	for u := range all {
		all[u] = u
	}
	if nu <= n {
		return all
	}
	rng := rand.New(rand.NewPCG(1, 0x57a75))
	for k := range n {
		j := k + rng.IntN(nu-k)
		all[k], all[j] = all[j], all[k]
	}
	return slices.Sorted(slices.Values(all[:n]))
}

// newFEBRTrainSet computes the z-score statistics of ext over x from the
// candidates of the users of statsSample and, when they fit in the memory
// budget, keeps every user's block (the memo of §4.5.6), z-scored in place
// once the statistics are known. Without the budget (budget < 0), or when
// the sample's blocks, scaled to all users, would not fit in it, only the
// sample is visited and training computes the features it needs on
// demand. pos, when not nil, are the positives (see febrTrainSet),
// disjoint from the rows of x.
func newFEBRTrainSet(ctx context.Context, x *Matrix, ext *febrExtractor, pos [][]uint32, budget int64, progress ProgressFunc) (*febrTrainSet, error) {
	ts := &febrTrainSet{x: x, ext: ext, pos: pos, ranker: NewRanker(x.Popularity(), x.Items())}
	nu := x.Users()
	sample := statsSample(nu)
	inSample := make([]bool, nu)
	for _, u := range sample {
		inSample[u] = true
	}
	perUser := make([]*featureStats, nu)
	counts := make([]int64, nu)
	// pass extracts the users of list, keeping their blocks in blocks
	// (when not nil) while they fit in the budget.
	var used atomic.Int64
	var over atomic.Bool
	pass := func(list []int, blocks []febrBlock) error {
		return ParallelFor(ctx, len(list), 16, "febr features", progress, func() func(lo, hi int) {
			return func(lo, hi int) {
				for _, u := range list[lo:hi] {
					if perUser[u] != nil && blocks == nil {
						continue
					}
					var s *featureStats
					if inSample[u] {
						s = newFeatureStats(ext.dim)
					}
					n := int64(0)
					var b *febrBlock
					if blocks != nil && !over.Load() {
						b = &blocks[u]
					}
					ext.extract(u, x.Row(u), func(i uint32, raw []float64) {
						if s != nil {
							s.add(raw)
						}
						n++
						if b != nil {
							b.items = append(b.items, i)
							b.feat = append(b.feat, raw...)
						}
					})
					perUser[u], counts[u] = s, n
					if b != nil {
						b.items, b.feat = slices.Clip(b.items), slices.Clip(b.feat)
						if used.Add(b.bytes()) > budget {
							over.Store(true)
						}
					}
				}
			}
		})
	}
	if err := pass(sample, nil); err != nil {
		return nil, err
	}
	// The memo's size, estimated from the sample.
	sampled := int64(0)
	for _, u := range sample {
		sampled += counts[u]
	}
	estimate := int64(float64(sampled) * float64(nu) / float64(max(1, len(sample))))
	var blocks []febrBlock
	if budget >= 0 && estimate*int64(8*ext.dim+4) <= budget {
		blocks = make([]febrBlock, nu)
		all := make([]int, nu)
		for u := range all {
			all[u] = u
		}
		if err := pass(all, blocks); err != nil {
			return nil, err
		}
	}
	// Merge in user order so that the statistics do not depend on the
	// schedule.
	total := newFeatureStats(ext.dim)
	for u := range nu {
		if perUser[u] != nil {
			total.merge(perUser[u])
		}
		np := len(ts.positives(u))
		nNeg := x.Items() - x.UserCount(u)
		if pos != nil {
			nNeg -= np
		}
		if np > 0 && nNeg > 0 {
			ts.eligible = append(ts.eligible, int32(u))
		}
	}
	if blocks != nil {
		for u := range nu {
			ts.candidates += counts[u]
		}
	} else {
		ts.candidates = estimate
	}
	ts.memoBytes = ts.candidates * int64(8*ext.dim+4)
	ext.setStats(total.meanStd())
	ts.zMiss = make([]float64, ext.dim)
	ext.zscore(ext.missingRaw(), ts.zMiss)
	if blocks == nil || over.Load() {
		ts.eligible = drawable(ts.eligible, nu)
		ts.pairRows = ext.pairRows()
		return ts, nil
	}
	err := ParallelFor(ctx, nu, 64, "", nil, func() func(lo, hi int) {
		return func(lo, hi int) {
			for u := lo; u < hi; u++ {
				f := blocks[u].feat
				for q := 0; q < len(f); q += ext.dim {
					ext.zscore(f[q:q+ext.dim], f[q:q+ext.dim])
				}
			}
		}
	})
	if err != nil {
		return nil, err
	}
	ts.blocks = blocks
	ts.memoBytes = used.Load()
	return ts, nil
}

// drawable keeps, of the eligible users of a matrix of nu users, those
// of userSample(nu, febrDrawUsers): the users OPT-ADG draws from without
// the memo.
func drawable(eligible []int32, nu int) []int32 {
	if nu <= febrDrawUsers {
		return eligible
	}
	in := make([]bool, nu)
	for _, u := range userSample(nu, febrDrawUsers) {
		in[u] = true
	}
	return slices.DeleteFunc(eligible, func(u int32) bool { return !in[u] })
}

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
	progress                     ProgressFunc
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
// positives, a few percent). The draws of a step
// are made with its user's view, ahead of the step (febrTrainSet.draw: the
// ⌈(|I|−1)/γ⌉ negatives it may look at, in order). A negative's features
// come from the memo (a binary search in
// the user's block; an item outside it has the missing vector) or,
// without the memo, are computed for that pair alone from the user's view
// (febrExtractor.pair), to the bit the same: a step costs O(k) per item
// looked at instead of a block of O(Σ_{j ∈ O⁺u} |rev(j)| + |I|) features.
//
// The ℓ2 term is stepped at every iteration (θ ← (1 − 2ηλ)θ). What is
// evaluated and returned is the average θ̄ of the iterates since θ0
// (averaged SGD) rather than the last iterate: with a constant step the
// iterates wander by more than the validation differences being looked
// for (±0.003 ADG on MovieLens), the average does not. Users are drawn
// independently at every iteration as in the dissertation's Algorithm 4.2,
// 64 at a time so that their views and draws are prepared in parallel,
// each step's from a seed of its own; the memo and its absence take the
// same steps (the same θ for the same seed).
func (ts *febrTrainSet) optADG(ctx context.Context, theta0 []float64, cfg optConfig, val *febrTrainSet) (optResult, error) {
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
	feature := func(u int, v *febrView, i uint32, buf []float64) []float64 {
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
	step := func(u int, v *febrView) {
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
		// them unless streaming past febrValidationMemo); the first pass
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
	views := make([]febrView, batch)
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
			err := ParallelFor(ctx, nb, 4, "", nil, func() func(lo, hi int) {
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
func (ts *febrTrainSet) draw(v *febrView, u, maxDraws int, seed uint64) {
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

// validationADG is the mean ADG (Def. 4.2) over the users with validation
// items of the ranking by θ·z, among the items not in the user's training
// row, ties broken by training popularity: what the offline evaluation
// computes for the model with this θ (val[u] sorted and disjoint from the
// training row). It works on the candidates alone (see blockRanks).
func (ts *febrTrainSet) validationADG(ctx context.Context, theta []float64, val [][]uint32) (float64, error) {
	all, _, err := ts.validationPass(ctx, theta, val, false, false, nil)
	return all, err
}

// validationPass is validationADG over every user with validation items
// (all), and over those whose blocks the memo keeps (kept; all of them
// without streaming). With fill, a streaming set keeps the blocks it
// extracts while they fit in febrValidationMemo and marks the memo
// filled; with memoOnly it ranks the kept users alone (all is then kept).
// With ranks (len ts.x.Users()), ranks[u] is set to the ranks of each user
// u ranked, as RankHeldOut ranks them.
func (ts *febrTrainSet) validationPass(ctx context.Context, theta []float64, val [][]uint32, fill, memoOnly bool, ranks [][]int) (all, kept float64, err error) {
	var users []int
	for u := range min(len(val), ts.x.Users()) {
		if len(val[u]) > 0 && (!memoOnly || ts.keeps(u)) {
			users = append(users, u)
		}
	}
	if len(users) == 0 {
		return 0, 0, ctx.Err()
	}
	sMiss := dot(theta, ts.zMiss)
	per := make([]float64, len(users))
	// rank ranks users[lo:hi], taking each block from the memo or
	// extracting it: into slot(k) when slot is not nil, else into a
	// worker's scratch block.
	rank := func(lo, hi int, slot func(k int) *febrBlock) error {
		return ParallelFor(ctx, hi-lo, 4, "", nil, func() func(a, b int) {
			var (
				own = &febrBlock{}
				rk  blockRanker
			)
			return func(a, b int) {
				for k := lo + a; k < lo+b; k++ {
					u := users[k]
					var bl *febrBlock
					switch {
					case ts.blocks != nil:
						bl = &ts.blocks[u]
					case ts.valMemo != nil && ts.valMemo[u] != nil:
						bl = ts.valMemo[u]
					default:
						bl = own
						if slot != nil {
							bl = slot(k)
						}
						ts.ext.block(u, ts.x.Row(u), bl)
					}
					r := rk.ranks(bl, ts.ext.dim, theta, sMiss, ts.x.Row(u), val[u], ts.ranker.prank, ts.x.Items())
					per[k] = metrics.ADG(r)
					if ranks != nil {
						ranks[u] = slices.Clone(r)
					}
				}
			}
		})
	}
	if !fill || ts.blocks != nil {
		err = rank(0, len(users), nil)
	} else {
		// Filling: the users are ranked a window at a time into the
		// window's blocks (reused from window to window), and those blocks
		// kept in user order while they fit, so that which users the memo
		// keeps does not depend on the schedule (nor, then, early
		// stopping's choice of θ).
		if ts.valMemo == nil {
			ts.valMemo = make([]*febrBlock, ts.x.Users())
		}
		const window = 64
		fresh := make([]febrBlock, window)
		for lo := 0; lo < len(users) && err == nil; lo += window {
			hi := min(lo+window, len(users))
			if err = rank(lo, hi, func(k int) *febrBlock { return &fresh[k-lo] }); err != nil {
				break
			}
			for k := lo; k < hi; k++ {
				b := &fresh[k-lo]
				if ts.keeps(users[k]) {
					continue // ranked from the memo, not extracted
				}
				if n := int64(len(b.items))*4 + int64(len(b.feat))*8; ts.valBytes+n <= febrValidationMemo {
					ts.valMemo[users[k]] = &febrBlock{items: slices.Clone(b.items), feat: slices.Clone(b.feat)}
					ts.valBytes += n
				}
			}
		}
		ts.valFilled = err == nil
	}
	if err != nil {
		return 0, 0, err
	}
	sum, sumKept, nKept := 0.0, 0.0, 0
	for k, v := range per {
		sum += v
		if ts.keeps(users[k]) {
			sumKept += v
			nKept++
		}
	}
	all = sum / float64(len(users))
	if nKept == 0 {
		// Not one block fits: early stopping ranks every user.
		return all, all, nil
	}
	return all, sumKept / float64(nKept), nil
}

// keeps reports whether user u's block is at hand without extracting it:
// in the training memo or in the memo of validation blocks.
func (ts *febrTrainSet) keeps(u int) bool {
	return ts.blocks != nil || (ts.valMemo != nil && ts.valMemo[u] != nil)
}

// valMemoAll reports whether the memo keeps every user with validation
// items in val.
func (ts *febrTrainSet) valMemoAll(val [][]uint32) bool {
	for u := range min(len(val), ts.x.Users()) {
		if len(val[u]) > 0 && !ts.keeps(u) {
			return false
		}
	}
	return true
}

// blockRanker computes ranks from a feature block without scoring the
// whole catalogue: every item outside the block has the missing score, so
// the items of that block ranked before a relevant item are counted from
// the popularity positions alone.
type blockRanker struct {
	score []float64 // of the block's items; NaN for history items
	rel   []int     // relevant items' positions in order
	rs    []float64 // relevant items' scores
	inBlk []bool
	diff  []int
	known []uint64 // a bit per popularity position: the history and block items
}

// knownBefore is the number of history and block items whose popularity
// position is below p.
func (r *blockRanker) knownBefore(p int32) int {
	w := int(p / 64)
	n := bits.OnesCount64(r.known[w] & (1<<(uint(p)%64) - 1))
	for _, b := range r.known[:w] {
		n += bits.OnesCount64(b)
	}
	return n
}

// ranks returns rank(i, y) (Def. 4.1) of every relevant item under the
// ranking y of the items not in hist by score (θ·z in the block, sMiss
// elsewhere), then popularity position prank, as Ranker.Ranks would.
func (r *blockRanker) ranks(b *febrBlock, dim int, theta []float64, sMiss float64, hist, relevant []uint32, prank []int32, nItems int) []int {
	h := len(relevant)
	out := make([]int, h)
	if h == 0 {
		return out
	}
	r.score = slices.Grow(r.score[:0], len(b.items))[:len(b.items)]
	nCand := 0 // block items not in hist
	t := 0
	for q, i := range b.items {
		for t < len(hist) && hist[t] < i {
			t++
		}
		if t < len(hist) && hist[t] == i {
			r.score[q] = math.NaN()
			continue
		}
		r.score[q] = dot(theta, b.row(q, dim))
		nCand++
	}
	r.rs = slices.Grow(r.rs[:0], h)[:h]
	r.inBlk = slices.Grow(r.inBlk[:0], h)[:h]
	anyTie := false
	for k, v := range relevant {
		r.rs[k], r.inBlk[k] = sMiss, false
		if q, ok := slices.BinarySearch(b.items, v); ok {
			r.rs[k], r.inBlk[k] = r.score[q], true
		}
		anyTie = anyTie || r.rs[k] == sMiss
	}
	before := func(sa float64, a uint32, sb float64, b uint32) bool {
		return sa > sb || (sa == sb && prank[a] < prank[b])
	}
	r.rel = slices.Grow(r.rel[:0], h)[:h]
	for k := range r.rel {
		r.rel[k] = k
	}
	slices.SortFunc(r.rel, func(a, c int) int {
		switch {
		case a == c:
			return 0
		case before(r.rs[a], relevant[a], r.rs[c], relevant[c]):
			return -1
		}
		return 1
	})
	// Block items: diff[q] counts those ranked after exactly q relevant
	// items (relevant items themselves excluded).
	r.diff = slices.Grow(r.diff[:0], h+1)[:h+1]
	clear(r.diff)
	worst := r.rs[r.rel[h-1]]
	next := 0 // relevant[next] is the first relevant item ≥ the block item
	for q, i := range b.items {
		for next < h && relevant[next] < i {
			next++
		}
		s := r.score[q]
		// Items ranked after every relevant item change no rank; NaN
		// (history) compares false and is skipped too.
		if !(s >= worst) || (next < h && relevant[next] == i) {
			continue
		}
		lo, hi := 0, h
		for lo < hi {
			mid := (lo + hi) / 2
			k := r.rel[mid]
			if before(r.rs[k], relevant[k], s, i) {
				lo = mid + 1
			} else {
				hi = mid
			}
		}
		r.diff[lo]++
	}
	// Popularity positions of the items that are not in the missing block.
	if anyTie {
		r.known = grow(r.known, (nItems+63)/64)
		for _, i := range hist {
			setBit(r.known, uint32(prank[i]))
		}
		for q, i := range b.items {
			if !math.IsNaN(r.score[q]) {
				setBit(r.known, uint32(prank[i]))
			}
		}
	}
	// The missing block: items neither in hist nor in the block.
	nMiss := nItems - len(hist) - nCand
	relMiss := 0
	for k := range relevant {
		if !r.inBlk[k] {
			relMiss++
		}
	}
	cum := 0
	for pos, k := range r.rel {
		cum += r.diff[pos]
		v, sv := relevant[k], r.rs[k]
		rank := pos + cum // relevant and block items before v
		switch {
		case sv < sMiss:
			// Every missing item is before v; the relevant ones among
			// them are counted in pos already.
			rank += nMiss - relMiss
		case sv == sMiss:
			// Missing items (other than v) before v by popularity: all
			// items with a smaller position, less the known ones and the
			// other relevant items that are missing (counted above).
			p := int(prank[v])
			n := p - r.knownBefore(prank[v])
			for k2, v2 := range relevant {
				if v2 != v && !r.inBlk[k2] && prank[v2] < prank[v] {
					n--
				}
			}
			rank += n
		}
		out[k] = rank
	}
	return out
}
