package eval

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/recsys-engine/recsys/recsys"
	"github.com/recsys-engine/recsys/recsys/febr"
	"github.com/recsys-engine/recsys/recsys/metrics"
)

// Tuning configures Tune.
type Tuning struct {
	// Grid is the search space; every model kind takes its candidates
	// from it (recsys.Kind.Candidates). The service passes a shorter grid
	// than the evaluation (DefaultGrid).
	Grid recsys.Grid
	// ValidationUsers caps the users whose validation items score each
	// candidate: above it, a fixed-seed uniform sample of that many users
	// with validation items validates every candidate (and FEBR's early
	// stopping). 0 means DefaultValidationUsers, negative means all.
	// Validation ranks every item for every user, so at 10⁵ users × 10⁴
	// items it costs more than the fits.
	ValidationUsers int
	// SampleSeed seeds the validation-user sample (0: 1).
	SampleSeed uint64
	// Options is the template of the options (recsys.Params.Options) of
	// every fit of a kind that takes them: for FEBR a *febr.Options (seed,
	// early stopping, learning rate, memory budget), of which the search
	// sets λ and the validation items. nil takes the defaults.
	Options recsys.Options
	// OnFit, when not nil, is called after every fit.
	OnFit func()
	// Extend is how many times each end of a grid dimension is extended
	// when the choice sits there (extendEdges): 0 means DefaultExtend,
	// negative none (the edge is then only reported).
	Extend int
	// MaxK, when positive, bounds the extension of k: a value past it is
	// not tried, and a choice at the grid's end is reported as an edge
	// (the service sets it from its memory budget: at a million items a
	// neighbour list per k costs gigabytes).
	MaxK int
	// Nested holds half of the validation users out of the search
	// (Halves): the grid, its extension, FEBR's early stopping and the
	// blend's θ see only the other half, and Tuned.Validation measures the
	// chosen model on the held-out half. Every model's selection score is
	// then an unbiased estimate on the same users, which auto mode
	// compares: the best of a grid scored on the users that chose it is
	// biased up, and by more the more it searched.
	Nested bool
	// Deadline, when not zero, is when the search's time budget ends.
	// Before each grid point the search predicts its seconds (the kind's
	// recsys.Kind.PointCost, corrected by the ratio of the measured to the
	// predicted seconds of the points fitted so far) and skips the point
	// when it would end past the deadline; a FitGrid batch keeps the
	// points that fit, in order; the grid extension takes no step whose
	// predicted seconds (its points together) exceed the time left, and
	// the value stays an edge. The first point is always fitted, so that
	// every model has a choice. Tuned.Skipped gives the reasons. A
	// blend's base searches, made within the blend's, share its deadline,
	// each an equal share of the time left (blendBaseSearch).
	Deadline time.Time

	// now is the clock of the budget (nil: time.Now), set by tests.
	now func() time.Time

	// shared, in eval's runs, holds the fold's searches of the models
	// others start from (sharedSearches); fixedK keeps k as given (a
	// FEBR variant's base's, or the blend's shared bases'): the
	// extension then moves λ alone.
	shared *sharedSearches
	fixedK bool
}

// Halves splits the validation sets of Nested: the users with validation
// items, shuffled by a generator seeded with SampleSeed, the first half
// (rounded up) to tune and the rest to select. With fewer than two such
// users both are val (nothing to hold out). The same seed gives the same
// halves, so a training job can hand the tuning half to the kinds that
// learn from validation items themselves (febr-blend's θ at scale).
func (t Tuning) Halves(val [][]uint32) (tune, sel [][]uint32) {
	var users []int
	for u, v := range val {
		if len(v) > 0 {
			users = append(users, u)
		}
	}
	if len(users) < 2 {
		return val, val
	}
	seed := t.SampleSeed
	if seed == 0 {
		seed = 1
	}
	rng := rand.New(rand.NewPCG(seed, 0x6e57ed))
	rng.Shuffle(len(users), func(a, b int) { users[a], users[b] = users[b], users[a] })
	tune, sel = make([][]uint32, len(val)), make([][]uint32, len(val))
	for k, u := range users {
		if k < (len(users)+1)/2 {
			tune[u] = val[u]
		} else {
			sel[u] = val[u]
		}
	}
	return tune, sel
}

// extend is t.Extend with its default (zeroOr).
func (t Tuning) extend() int { return zeroOr(t.Extend, DefaultExtend) }

// admit reports whether the extension may try value v of dimension d
// (MaxK).
func (t Tuning) admit(d dimension, v float64) bool {
	return t.MaxK <= 0 || !d.main || d.name != "k" || int(v) <= t.MaxK
}

// DefaultValidationUsers is the validation-user sample of Tuning: with the
// per-user ADG's standard deviation of 0.1–0.15 on ml-100k and Last.fm, a
// mean over 5,000 users has a standard error of about 0.002, and the
// difference between two candidates, measured on the same users, far less
// (docs/evaluation.md "Sampled validation").
const DefaultValidationUsers = 5000

// Tuned is the outcome of Tune: the choice, with Params refitting the
// chosen model on the split's training matrix and Refit on all the data.
type Tuned struct {
	recsys.Choice
	// Validation holds every measure of the chosen model over the
	// validation users (the sample of Tuning.ValidationUsers); under
	// Tuning.Nested over the held-out half, and Choice.ValidationADG is
	// then its ADG there.
	Validation metrics.Values
	// TuningADG is the validation ADG the search maximised, on the users
	// it tuned on (ValidationADG's without Tuning.Nested).
	TuningADG float64
	// SelectionUsers is the number of users Validation is over under
	// Tuning.Nested (0 without).
	SelectionUsers int
	// Candidates are the configurations searched, for reports (a FEBR
	// search with Grid.KByBaseline fits fewer; a grid's points skipped by
	// the time budget are not among them, but in Points).
	Candidates []recsys.Params
	// Train is the matrix Params refit the chosen model on: the split's
	// training matrix, except for a kind with its own search (FEBR) under
	// the users protocol (withLiveRows).
	Train *recsys.Matrix
	// Extended lists the values searched past the grid's ends because the
	// choice sat there ("k=2000"), and AtEdge the chosen values still at
	// an end of the extended grid ("k=4000"): a larger grid might choose
	// otherwise. k capped by the data is no edge.
	Extended, AtEdge []string
	// Points are the search's points in the order searched, the blend's
	// bases' first, with their predicted and measured seconds, and
	// Skipped the reasons of the points and extension steps the time
	// budget (Tuning.Deadline) left out ("factors=400: predicted 812 s,
	// 95 s left of the budget").
	Points  []PointTime
	Skipped []string
}

// Tune is the hyper-parameter search of dissertation §4.7.3 for one model
// on a split, shared by the service's training and the offline
// evaluation. The model's kind lists its candidates from the grid with k
// capped by the data (recsys.Kind.Candidates, recsys.Caps); each is fitted
// on s.Train and its validation items ranked, and the one with the highest
// validation ADG (Def. 4.2) is chosen, the first on a tie, so the smaller
// k. A kind with its own search (FEBR, recsys.Kind.Search) runs that
// instead. cache, built on s.Train with k_max at least the largest k of
// the grid, is required: it shares the neighbour lists among the fits and
// gives the longest item list. Under t.Nested the search sees half of the
// validation users and the choice is measured on the other half (Halves).
// Under t.Deadline the points and extension steps predicted past it are
// skipped, the first point always fitted (Tuned.Skipped).
func Tune(ctx context.Context, name string, s *Split, cache *recsys.NeighbourCache, t Tuning) (*Tuned, error) {
	if !t.Nested {
		return tune(ctx, name, s, cache, t)
	}
	tuneVal, selVal := t.Halves(s.Validation)
	ts := *s
	ts.Validation = tuneVal
	tuned, err := tune(ctx, name, &ts, cache, t)
	if err != nil {
		return nil, err
	}
	sel := SampleUsers(selVal, t.validationUsers(), t.SampleSeed)
	v, err := evaluateLive(ctx, tuned.Model, tuned.Train, s.Live, sel)
	if err != nil {
		return nil, err
	}
	tuned.Validation, tuned.ValidationADG, tuned.SelectionUsers = v, v[metrics.MADG], usersWith(sel)
	return tuned, nil
}

// tune is Tune without Tuning.Nested: the search on s.Validation.
func tune(ctx context.Context, name string, s *Split, cache *recsys.NeighbourCache, t Tuning) (*Tuned, error) {
	kind, err := recsys.KindOf(name)
	if err != nil {
		return nil, err
	}
	var caps recsys.Caps
	if kind.Candidates != nil || kind.Search != nil {
		// Only a grid needs the caps: a model without one (popular) does
		// not wait for the item neighbour lists.
		if caps, err = dataCaps(ctx, s.Train, cache); err != nil {
			return nil, err
		}
	}
	cands := candidates(kind, t.Grid, caps)
	val := SampleUsers(s.Validation, t.validationUsers(), t.SampleSeed)
	if kind.Search != nil {
		return tuneSearch(ctx, name, kind, s, cache, t, caps, cands, val)
	}
	mainName := "k"
	if kind.New != nil {
		if _, ok := recsys.ParamsOf(kind.New())["factors"]; ok {
			mainName = "factors"
		}
	}
	label := func(p recsys.Params) string { return pointLabel(p, mainName) }
	cost := newSearchCost(kind, t, s.Train, val, cache.KMax())
	var (
		best    Tuned
		prev    recsys.Model
		prevP   recsys.Params
		bp      recsys.Params
		bestADG = -1.0
		fitted  []recsys.Params
	)
	try := func(cs []recsys.Params) (recsys.Params, error) {
		var (
			grid    []func() recsys.Model
			gridSec float64
			// each point's share of the batch's formula, which predicts
			// the batch at batchPredicted
			shares                       []float64
			batchFormula, batchPredicted float64
		)
		if kind.FitGrid != nil {
			// The whole grid at once (slim), with the warm starts below,
			// less the points past the time budget.
			if cs = cost.trim(cs, label); len(cs) == 0 {
				return bp, nil
			}
			ps := make([]recsys.Params, len(cs))
			for c, p := range cs {
				ps[c] = p
				ps[c].Cache = cache
			}
			start := cost.now()
			var err error
			if grid, err = kind.FitGrid(ctx, s.Train, ps); err != nil {
				return bp, fmt.Errorf("eval: fit %s: %w", name, err)
			}
			if grid != nil {
				gridSec = cost.now().Sub(start).Seconds()
				shares = batchShares(cost, cs)
				batchFormula = cost.formulaOf(cs, true)
				batchPredicted = cost.rate() * batchFormula
			}
		}
		for c, p := range cs {
			var (
				m                  recsys.Model
				formula, predicted float64
			)
			p.Cache = cache
			start := cost.now()
			if grid != nil {
				m, grid[c] = grid[c](), nil
				formula = shares[c] * batchFormula
				predicted = shares[c] * batchPredicted
			} else {
				formula = cost.formulaOf([]recsys.Params{p}, false)
				predicted = cost.rate() * formula
				if cost.fitted > 0 {
					if why := cost.over(label(p), predicted); why != "" {
						cost.skip(label(p), predicted, why)
						continue
					}
				}
				m = kind.New()
				if prev != nil && recsys.WarmStart(prevP, p) {
					// Consecutive candidates differ in ℓ1 only: warm start
					// along the regularisation path (slim; the others
					// ignore Init).
					p.Init = prev
				}
				if err := m.Fit(ctx, s.Train, p); err != nil {
					return bp, fmt.Errorf("eval: fit %s: %w", name, err)
				}
			}
			v, err := evaluateLive(ctx, m, s.Train, s.Live, val)
			if err != nil {
				return bp, err
			}
			measured := cost.now().Sub(start).Seconds()
			if grid != nil {
				measured += gridSec * shares[c]
			}
			cost.done(label(p), predicted, measured, formula, grid == nil)
			kept := p
			kept.Cache, kept.Init = nil, nil
			fitted = append(fitted, kept)
			if v[metrics.MADG] > bestADG {
				bp, bestADG = p, v[metrics.MADG]
				best.Model, best.Validation = m, v
			}
			// Keep the fit for a warm start only when the next one may
			// take it (recsys.WarmStart; the last of a batch, for the
			// next batch): at a million items a fit's lists take
			// gigabytes.
			prev, prevP = nil, p
			if c+1 == len(cs) || recsys.WarmStart(p, cs[c+1]) {
				prev = m
			}
			if t.OnFit != nil {
				t.OnFit()
			}
		}
		return bp, nil
	}
	if _, err := try(cands); err != nil {
		return nil, err
	}
	gen := func(d dimension, at recsys.Params, v float64) []recsys.Params {
		if !d.main {
			return []recsys.Params{d.set(at, v)}
		}
		if mainName == "factors" && int(v) > min(s.Train.Users(), s.Train.Items()) {
			return nil // no more factors than the matrix has rank
		}
		// A new main value is searched with every secondary setting,
		// unless the data caps k below it (Kind.Candidates drops it).
		g := t.Grid
		g.K, g.Factors = []int{at.K, int(v)}, []int{at.K, int(v)}
		return slices.DeleteFunc(candidates(kind, g, caps), func(p recsys.Params) bool { return p.K != int(v) })
	}
	tryMore := func(cs []recsys.Params) (recsys.Params, error) {
		prev = nil
		cands = append(cands, cs...)
		return try(cs)
	}
	// A step is predicted as the points it fits: one batch for a kind
	// that fits its grid at once.
	afford := func(d dimension, v float64, cs []recsys.Params) string {
		return cost.over(d.format(v), cost.predict(cs, kind.FitGrid != nil))
	}
	bp, rep, err := extendEdges(bp, dimensions(cands, mainName, false), cands,
		extension{limit: t.extend(), gen: gen, try: tryMore, admit: t.admit, afford: afford})
	if err != nil {
		return nil, err
	}
	bp.Cache, bp.Init = nil, nil
	best.Params, best.Refit, best.ValidationADG, best.TuningADG = bp, bp, bestADG, bestADG
	best.Candidates, best.Train = fitted, s.Train
	best.Extended, best.AtEdge = rep.extended, rep.edges
	best.Points, best.Skipped = cost.points, append(cost.skipped, rep.skipped...)
	return &best, nil
}

// batchShares are the shares of each point of the FitGrid batch cs in
// its formula's seconds: its PointCost and an equal part of the GridCost
// (equal parts when the kind has no formula).
func batchShares(cost *searchCost, cs []recsys.Params) []float64 {
	out := make([]float64, len(cs))
	total := cost.formulaOf(cs, true)
	for c, p := range cs {
		if total <= 0 {
			out[c] = 1 / float64(len(cs))
			continue
		}
		out[c] = (cost.formulaOf([]recsys.Params{p}, false) + (total-cost.formulaOf(cs, false))/float64(len(cs))) / total
	}
	return out
}

// tuneSearch is Tune for a kind with its own search (FEBR): the search on
// the grid, then again on one-point grids past its edges (extendEdges:
// the next k with every λ, or the chosen k with the next λ), keeping the
// best validation ADG. The first search is always made; an extension
// step is predicted from the searches measured, per unit of work they
// list (units: a λ run, a k's features), a step to a larger k scaled by
// the ratio of the ks (FEBR's features grow with k), and a blend's step
// with the base searches it makes again, and not taken past the time
// budget.
func tuneSearch(ctx context.Context, name string, kind recsys.Kind, s *Split, cache *recsys.NeighbourCache, t Tuning,
	caps recsys.Caps, cands []recsys.Params, val [][]uint32) (*Tuned, error) {
	x := s.Train
	if s.Live != nil {
		var err error
		if x, err = withLiveRows(s.Train, s.Live, s.Validation); err != nil {
			return nil, err
		}
	}
	fo := febr.CopyOptions(t.Options)
	var bases *baseEdges
	if name == febr.BlendName {
		fo.Blend, bases = blendBaseSearch(fo.Blend, t)
		if t.shared.on(x, t) {
			t.fixedK = true // the bases' searches are theirs, made once
		}
	}
	cost := newSearchCost(kind, t, x, val, cache.KMax())
	p := recsys.Params{Cache: cache, Options: &fo}
	// search runs the kind's search on g and records it: its seconds, of
	// which its own are those not in its bases' searches (a blend's),
	// which the rate compares with units. It returns the seconds of the
	// base searches that every later search makes again (those not
	// shared).
	search := func(label string, g recsys.Grid, predicted, units float64) (recsys.Choice, float64, error) {
		var all, again float64
		if bases != nil {
			all, again = bases.seconds, bases.again
		}
		start := cost.now()
		c, err := kind.Search(ctx, x, val, g, caps, p, t.OnFit)
		if err != nil {
			return c, 0, fmt.Errorf("eval: search %s: %w", name, err)
		}
		measured := cost.now().Sub(start).Seconds()
		if bases != nil {
			all, again = bases.seconds-all, bases.again-again
		}
		cost.doneOwn(label, predicted, measured, max(0, measured-all), units)
		return c, again, nil
	}
	// units is the formula of a search of the fits cs: one for each λ
	// run (OPT-ADG) and for each k's features (a blend's base refits and
	// stack, its k 0), one for each other fit of a FEBR variant (fsSLIM's
	// per k); a blend's other fits are its bases', timed apart.
	units := func(cs []recsys.Params) float64 {
		var u float64
		var ks []int
		for _, q := range cs {
			switch {
			case febrOptions(q) != nil:
				u++
				if !slices.Contains(ks, q.K) {
					ks = append(ks, q.K)
				}
			case name != febr.BlendName:
				u++
			}
		}
		return u + float64(len(ks))
	}
	c, again, err := search("grid", t.Grid, 0, units(cands))
	if err != nil {
		return nil, err
	}
	gen := func(d dimension, at recsys.Params, v float64) []recsys.Params {
		g := t.Grid
		if d.main {
			g.K, g.Lambda = []int{at.K, int(v)}, t.Grid.Lambda
			return slices.DeleteFunc(candidates(kind, g, caps), func(p recsys.Params) bool { return p.K != int(v) })
		}
		g.K, g.Lambda = []int{at.K}, []float64{v}
		return candidates(kind, g, caps)
	}
	// A step is predicted as its units at the rate of the searches made,
	// scaled by the ratio of the new k to the chosen one for a step up in
	// k, and the base searches it makes again.
	var stepUnits, stepPredicted float64
	var stepLabel string
	afford := func(d dimension, v float64, cs []recsys.Params) string {
		stepUnits, stepLabel = units(cs), d.format(v)
		if d.main && c.Params.K > 0 && v > float64(c.Params.K) {
			stepUnits *= v / float64(c.Params.K)
		}
		stepPredicted = cost.rate()*stepUnits + again
		return cost.over(stepLabel, stepPredicted)
	}
	try := func(cs []recsys.Params) (recsys.Params, error) {
		g := t.Grid
		g.K = []int{cs[0].K}
		g.Lambda = nil
		for _, p := range cs {
			if o := febrOptions(p); o != nil {
				g.Lambda = append(g.Lambda, o.Lambda)
			}
		}
		cands = append(cands, cs...)
		next, _, err := search(stepLabel, g, stepPredicted, stepUnits)
		if err != nil {
			return c.Params, err
		}
		if next.ValidationADG > c.ValidationADG {
			c = next
		}
		return c.Params, nil
	}
	dims := dimensions(cands, "k", true)
	if t.fixedK {
		dims = slices.DeleteFunc(dims, func(d dimension) bool { return d.main })
	}
	_, rep, err := extendEdges(c.Params, dims, cands, extension{limit: t.extend(), gen: gen, try: try, admit: t.admit, afford: afford})
	if err != nil {
		return nil, err
	}
	var v metrics.Values
	if c.ValidationRanks != nil {
		// The search ranked the chosen model's validation items already.
		v, _ = meanValues(c.ValidationRanks, x, nil)
	} else if v, err = Evaluate(ctx, c.Model, x, val); err != nil {
		return nil, err
	}
	extended, edges, skipped, points := rep.extended, rep.edges, rep.skipped, cost.points
	if bases != nil {
		extended, edges = append(extended, bases.extended...), append(edges, bases.edges...)
		skipped, points = append(bases.skipped, skipped...), append(bases.points, points...)
	}
	return &Tuned{Choice: c, Validation: v, TuningADG: c.ValidationADG, Candidates: cands, Train: x, Extended: extended, AtEdge: edges,
		Skipped: skipped, Points: points}, nil
}

// baseEdges collects the grid extensions of a blend's base searches and
// the points their time budget skipped, prefixed with the base's name
// ("ials.factors=128"), and their points' times.
type baseEdges struct {
	extended, edges, skipped []string
	points                   []PointTime
	searched                 map[*Tuned]bool
	// seconds is the time spent in the base searches, again the part of
	// it in searches not shared (made again by each search of the blend).
	seconds, again float64
}

// add records one base search's extensions, skipped points and times,
// each once (the blend's own extension searches its bases again, and may
// take the same shared search).
func (b *baseEdges) add(name string, tuned *Tuned) {
	if b.searched == nil {
		b.searched = map[*Tuned]bool{}
	}
	for _, e := range tuned.Extended {
		if e = name + "." + e; !slices.Contains(b.extended, e) {
			b.extended = append(b.extended, e)
		}
	}
	for _, e := range tuned.AtEdge {
		if e = name + "." + e; !slices.Contains(b.edges, e) {
			b.edges = append(b.edges, e)
		}
	}
	if b.searched[tuned] {
		return
	}
	b.searched[tuned] = true
	for _, e := range tuned.Skipped {
		if e = name + "." + e; !slices.Contains(b.skipped, e) {
			b.skipped = append(b.skipped, e)
		}
	}
	for _, p := range tuned.Points {
		p.Params = name + "." + p.Params
		b.points = append(b.points, p)
	}
}

// blendBaseSearch is the blend options o (nil: the defaults) with every
// base searched by Tune on the blend's matrix and validation users, so
// with t's grid extension, as each base alone is (the blend searched
// its bases on the grid as given before, so its ials base had at most 64
// factors where ials alone took 128: docs/evaluation.md "febr-blend's search"). The extensions
// are collected in the returned baseEdges for the blend's report.
//
// Under a time budget (Tuning.Deadline) each base search that is still
// to be made gets an equal share of the time left, the bases after it
// counted (shareDeadline): one base's long grid (fsSLIM at k = 1000 on
// many items) does not leave the factorisations after it a single point,
// and what a base does not use passes to the next.
func blendBaseSearch(o *febr.BlendOptions, t Tuning) (*febr.BlendOptions, *baseEdges) {
	var bo febr.BlendOptions
	if o != nil {
		bo = *o
	}
	if bo.Search != nil {
		return &bo, nil
	}
	edges := &baseEdges{}
	names := bo.Bases
	if len(names) == 0 {
		names = febr.BlendBases()
	}
	bo.Search = func(ctx context.Context, x *recsys.Matrix, val [][]uint32, name string, g recsys.Grid, _ recsys.Caps,
		cache *recsys.NeighbourCache, onFit func()) (recsys.Model, recsys.Params, error) {
		if kind, err := recsys.KindOf(name); err != nil || kind.Search != nil {
			// As recsys's own base search: a model with its own search
			// (FEBR, the blend) is no base.
			return nil, recsys.Params{}, fmt.Errorf("eval: %s cannot be a base of %s", name, febr.BlendName)
		}
		t := t
		t.Deadline = shareDeadline(t, names, name, func(n string) bool {
			b := slices.Index(names, n)
			return bo.FittedOn == x && b < len(bo.Fitted) && bo.Fitted[b] != nil || t.shared.made(n, x, t)
		})
		start, shared := t.clock()(), false
		defer func() {
			d := t.clock()().Sub(start).Seconds()
			edges.seconds += d
			if !shared {
				edges.again += d
			}
		}()
		ts := t
		ts.OnFit = onFit
		if tuned, ok, err := t.shared.baseFor(ctx, name, x, ts); err != nil {
			return nil, recsys.Params{}, err
		} else if ok {
			shared = true
			edges.add(name, tuned)
			return tuned.Model, tuned.Params, nil
		}
		tb := t
		tb.shared = nil
		// val is the blend's validation sample already; x's rows are the
		// histories (Split.Live nil), as the blend's own validation has it.
		// The blend holds its selection users out already (Nested).
		tb.Grid, tb.ValidationUsers, tb.OnFit, tb.Nested = g, -1, onFit, false
		tuned, err := Tune(ctx, name, &Split{Train: x, Validation: val}, cache, tb)
		if err != nil {
			return nil, recsys.Params{}, err
		}
		edges.add(name, tuned)
		return tuned.Model, tuned.Params, nil
	}
	return &bo, edges
}

// shareDeadline is the deadline of base name's search among a blend's
// bases names under t: now plus the time left to t.Deadline over the
// bases from name on that still need a search (a kind with a grid that
// done does not report as made already); t.Deadline itself when there is
// none.
func shareDeadline(t Tuning, names []string, name string, done func(string) bool) time.Time {
	k := slices.Index(names, name)
	if t.Deadline.IsZero() || k < 0 {
		return t.Deadline
	}
	pending := 0
	for _, n := range names[k:] {
		if kind, err := recsys.KindOf(n); err == nil && kind.Candidates != nil && !done(n) {
			pending++
		}
	}
	if pending <= 1 {
		return t.Deadline
	}
	now := t.clock()()
	return now.Add(t.Deadline.Sub(now) / time.Duration(pending))
}

// withLiveRows is train with the live histories of the users with
// validation items as their rows. A kind with its own search (FEBR)
// validates, and stops early, on the validation items of users of the
// matrix it fits (febr.Options.Validation), so under the users
// protocol it fits on the training users and the validation users' live
// histories; the test users stay out of training.
func withLiveRows(train *recsys.Matrix, live, val [][]uint32) (*recsys.Matrix, error) {
	pairs := make([]recsys.Pair, 0, train.NNZ())
	for u := range train.Users() {
		row := train.Row(u)
		if len(val[u]) > 0 && live[u] != nil {
			row = live[u]
		}
		for _, i := range row {
			pairs = append(pairs, recsys.Pair{User: uint32(u), Item: i})
		}
	}
	return recsys.NewMatrix(train.Users(), train.Items(), pairs)
}

// candidates lists the configurations of a kind on g capped by c: its
// Candidates, or one fit with the defaults.
func candidates(kind recsys.Kind, g recsys.Grid, c recsys.Caps) []recsys.Params {
	var out []recsys.Params
	if kind.Candidates != nil {
		out = kind.Candidates(g, c)
	}
	if len(out) == 0 {
		out = []recsys.Params{{}}
	}
	return out
}

// dataCaps are the limits of the training matrix on k: the longest item
// neighbour list in cache (built on train) and |U| − 1.
// A list as long as the cache keeps may have been cut there, so the data
// caps k only below the cache's k_max: beyond it, |I| − 1 bounds the list.
func dataCaps(ctx context.Context, train *recsys.Matrix, cache *recsys.NeighbourCache) (recsys.Caps, error) {
	items, err := cache.MaxRow(ctx, nil)
	if err != nil {
		return recsys.Caps{}, err
	}
	if items >= cache.KMax() {
		items = train.Items() - 1
	}
	return recsys.Caps{Items: items, Users: train.Users() - 1}, nil
}

// validationUsers is the sample size of t: ValidationUsers, its default
// for 0, and 0 (all) for a negative value.
func (t Tuning) validationUsers() int { return zeroOr(t.ValidationUsers, DefaultValidationUsers) }

// zeroOr is v, def for 0, and 0 for a negative v.
func zeroOr(v, def int) int {
	switch {
	case v == 0:
		return def
	case v < 0:
		return 0
	}
	return v
}

// SampleUsers keeps the held-out items of n users drawn uniformly without
// replacement, by a generator seeded with seed (0: 1), among those with
// any; all of sets when n ≤ 0 or there are not more such users. The same
// seed gives the same sample.
func SampleUsers(sets [][]uint32, n int, seed uint64) [][]uint32 {
	var users []int
	for u, v := range sets {
		if len(v) > 0 {
			users = append(users, u)
		}
	}
	if n <= 0 || len(users) <= n {
		return sets
	}
	if seed == 0 {
		seed = 1
	}
	rng := rand.New(rand.NewPCG(seed, 0x5a3b1e))
	// A partial Fisher–Yates shuffle draws the first n.
	for k := range n {
		j := k + rng.IntN(len(users)-k)
		users[k], users[j] = users[j], users[k]
	}
	out := make([][]uint32, len(sets))
	for _, u := range users[:n] {
		out[u] = sets[u]
	}
	return out
}
