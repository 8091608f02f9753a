package febr

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/recsys-engine/recsys/recsys"
)

// Grid is the search space of dissertation §4.7.3 for a FEBR variant:
// the main parameter k and, for every k, the secondary λ; for the SLIM
// affinity also the fsSLIM (ℓ1, ℓ2) pairs, chosen per k by the validation
// ADG of SLIM itself before λ is tuned (a fitted SLIM is the affinity
// matrix FEBRi-SLIM starts from, §4.7.3).
type Grid struct {
	K      []int
	Lambda []float64
	SLIM   [][2]float64
	// KByBaseline chooses k (and the fsSLIM pair) by the validation ADG
	// of the aggsum predictor OPT-ADG starts from, and runs OPT-ADG for
	// that k alone: a quicker search for retraining in the service.
	KByBaseline bool
	// OnTrial, when not nil, is called after every fit of the search
	// (fsSLIM fits and, with KByBaseline, the baseline of every k
	// included, with Lambda 0), for progress reports.
	OnTrial func(Trial)
}

// DefaultLambdas is the λ grid of §4.7.3.
var DefaultLambdas = []float64{1e-4, 1e-3, 1e-2, 1e-1}

// Trial is one configuration a search tried.
type Trial struct {
	K                     int
	Lambda, L1, L2        float64
	ValidationADG         float64
	Iterations            int
	Seconds               float64
	SLIMValidationADG     float64 // the SLIM affinity alone (slim variant)
	Candidates, MemoBytes int64
}

// Search runs the two-level search of §4.7.3 for one FEBR variant
// (a registry name) on x: for every k of the grid it builds the features
// once (with, for the SLIM affinity, the fsSLIM pair that ranks best on
// the validation items) and trains one θ per λ from them by OPT-ADG with
// early stopping on the Validation items of p.Options (*Options), which
// are required. It returns the model with the highest validation ADG (the
// first on a tie) and every trial. p.Cache, p.Progress and the other
// options apply to every fit; p.K, p.L1, p.L2 and the options' Lambda are
// ignored.
func Search(ctx context.Context, name string, x *recsys.Matrix, g Grid, p recsys.Params) (*Model, []Trial, error) {
	v, ok := variantOf(name)
	if !ok {
		return nil, nil, fmt.Errorf("febr: %q is not a FEBR model", name)
	}
	o, err := optionsOf(p)
	if err != nil {
		return nil, nil, err
	}
	if len(o.Validation) == 0 {
		return nil, nil, fmt.Errorf("febr: a FEBR search needs validation items")
	}
	lambdas := g.Lambda
	if len(lambdas) == 0 {
		lambdas = DefaultLambdas
	}
	slimPairs := g.SLIM
	if v.affinity == affSLIM && len(slimPairs) == 0 {
		slimPairs = [][2]float64{{recsys.DefaultL1, recsys.DefaultL2}}
	}
	var (
		best    *Model
		bestADG = -1.0
		trials  []Trial
	)
	var ho *holdout
	if o.Holdout > 0 {
		if ho, err = newHoldout(x, o.Holdout, o.Seed, g.K, nil); err != nil {
			return nil, nil, err
		}
	}
	// prepared is one k: its fsSLIM pair and features.
	type prepared struct {
		k       int
		l1, l2  float64
		slimADG float64
		data    *fitData
	}
	// A slim search already made on x with the same grid and validation
	// items chose k and the fsSLIM pair by the same ADG that KByBaseline
	// compares (the aggsum predictor of FEBRi-SLIM is SLIM itself): take
	// its choice and weights instead of fitting the grid again.
	searched, fromSearch := searchedSLIM(o, x, g, v)
	if fromSearch {
		g.K = []int{searched.k}
	}
	if ks, ok := baselineKs(o, g, v); ok {
		g.K = ks
	}
	// choose picks the fsSLIM pair of one k (SLIM affinity); build makes
	// the features.
	choose := func(k int) (*prepared, *recsys.Neighbours, error) {
		pr := &prepared{k: k}
		if v.affinity != affSLIM {
			return pr, nil, nil
		}
		if fromSearch {
			pr.l1, pr.l2 = searched.l1, searched.l2
			return pr, searched.w, nil
		}
		slim, adg, err := bestSLIM(ctx, x, kParams(p, k, 0, 0), slimPairs, o.Validation, g.OnTrial)
		if err != nil {
			return nil, nil, err
		}
		pr.l1, pr.l2, pr.slimADG = slim.l1, slim.l2, adg
		return pr, slim.w, nil
	}
	build := func(pr *prepared, slimW *recsys.Neighbours) error {
		var err error
		pr.data, err = prepare(ctx, x, v, kParams(p, pr.k, pr.l1, pr.l2), o, slimW, ho)
		return err
	}
	trainLambdas := func(pr *prepared) error {
		models, err := trainEach(ctx, pr.data, lambdas, o, p.Progress, func(ol Options, progress recsys.ProgressFunc) (*Model, error) {
			m := &Model{v: v}
			return m, m.train(ctx, pr.data, pr.k, pr.l1, pr.l2, ol, progress)
		})
		if err != nil {
			return err
		}
		for c, lambda := range lambdas {
			m := models[c]
			tr := Trial{
				K: pr.k, Lambda: lambda, L1: m.l1, L2: m.l2,
				ValidationADG: m.info.ValidationADG, Iterations: m.info.Iterations,
				Seconds: m.info.FeatureSeconds + m.info.OptSeconds, SLIMValidationADG: pr.slimADG,
				Candidates: m.info.Candidates, MemoBytes: m.info.MemoBytes,
			}
			trials = append(trials, tr)
			if g.OnTrial != nil {
				g.OnTrial(tr)
			}
			if m.info.ValidationADG > bestADG {
				best, bestADG = m, m.info.ValidationADG
			}
		}
		return nil
	}
	var (
		bestK    *prepared
		bestKW   *recsys.Neighbours
		bestKADG = -1.0
	)
	for _, k := range g.K {
		pr, slimW, err := choose(k)
		if err != nil {
			return nil, nil, err
		}
		var adg float64
		switch {
		case !g.KByBaseline:
			if err := build(pr, slimW); err != nil {
				return nil, nil, err
			}
			if err := trainLambdas(pr); err != nil {
				return nil, nil, err
			}
			continue
		case len(g.K) == 1:
			// Nothing to compare: OPT-ADG runs at this k.
		case v.affinity == affSLIM:
			// The aggsum predictor of FEBRi-SLIM is SLIM itself.
			adg = pr.slimADG
		default:
			if err := build(pr, nil); err != nil {
				return nil, nil, err
			}
			if adg, err = pr.data.full.validationADG(ctx, pr.data.full.ext.initialTheta(), o.Validation); err != nil {
				return nil, nil, err
			}
			if g.OnTrial != nil {
				g.OnTrial(Trial{K: k, ValidationADG: adg})
			}
		}
		if adg > bestKADG {
			bestK, bestKW, bestKADG = pr, slimW, adg
		} else {
			pr.data = nil
		}
	}
	if bestK != nil {
		if bestK.data == nil {
			if err := build(bestK, bestKW); err != nil {
				return nil, nil, err
			}
		}
		if err := trainLambdas(bestK); err != nil {
			return nil, nil, err
		}
	}
	if best == nil {
		return nil, nil, fmt.Errorf("febr: empty FEBR grid")
	}
	return best, trials, nil
}

// trainEach runs train once per λ, concurrently on up to GOMAXPROCS
// goroutines, and returns the models in λ order. OPT-ADG's steps are
// serial and the runs independent (each from the aggsum predictor with
// o.Seed), so the models are those of one run after another; the runs
// share data's validation memo, which is filled first (by the ranking of
// θ0 that every run starts with), and progress reports are serialised.
func trainEach(ctx context.Context, data *fitData, lambdas []float64, o Options, progress recsys.ProgressFunc, train func(Options, recsys.ProgressFunc) (*Model, error)) ([]*Model, error) {
	workers := min(runtime.GOMAXPROCS(0), len(lambdas))
	if workers > 1 {
		if val := data.full; val.blocks == nil && !val.valFilled && len(o.Validation) > 0 {
			if _, _, err := val.validationPass(ctx, val.ext.initialTheta(), o.Validation, true, false, nil); err != nil {
				return nil, err
			}
		}
		if progress != nil {
			var mu sync.Mutex
			inner := progress
			progress = func(stage string, done, total int) {
				mu.Lock()
				defer mu.Unlock()
				inner(stage, done, total)
			}
		}
	}
	models := make([]*Model, len(lambdas))
	errs := make([]error, len(lambdas))
	next := atomic.Int32{}
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for c := int(next.Add(1)) - 1; c < len(lambdas); c = int(next.Add(1)) - 1 {
				ol := o
				ol.Lambda = lambdas[c]
				models[c], errs[c] = train(ol, progress)
			}
		})
	}
	wg.Wait()
	return models, errors.Join(errs...)
}

// searchedSLIM is o.SLIM when it can stand for the fsSLIM part of a
// KByBaseline search of a SLIM-affinity variant on x (Options.SLIM):
// a slim model fitted on x with a k of the grid and one of its pairs.
func searchedSLIM(o Options, x *recsys.Matrix, g Grid, v variant) (slimFit, bool) {
	s, ok := slimFitOf(o.SLIM)
	if !ok || !g.KByBaseline || v.affinity != affSLIM || s.w.Rows() != x.Items() ||
		!slices.Contains(g.K, s.k) || !slices.Contains(g.SLIM, [2]float64{s.l1, s.l2}) {
		return slimFit{}, false
	}
	return s, true
}

// baselineKs are the k's a KByBaseline search of variant v on grid g takes
// from o.Baselines (Options.Baselines), in grid order, or false when a
// baseline of v is not there: each baseline's k when it is in the grid;
// when the baseline's search went past an end of the grid (eval's grid
// extension), the grid's best was that end, the value of the grid nearest
// to it, and the extension is the caller's to repeat.
func baselineKs(o Options, g Grid, v variant) ([]int, bool) {
	names := v.baselines()
	if !g.KByBaseline || len(g.K) == 0 || len(names) == 0 {
		return nil, false
	}
	var ks []int
	for _, name := range names {
		k, ok := baselineK(o.Baselines, name)
		if !ok {
			return nil, false
		}
		nearest := g.K[0]
		for _, c := range g.K {
			if math.Abs(float64(c)-k) < math.Abs(float64(nearest)-k) {
				nearest = c
			}
		}
		ks = append(ks, nearest)
	}
	var out []int
	for _, c := range g.K {
		if slices.Contains(ks, c) && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out, true
}

// baselineK is the k of the model named name among ms.
func baselineK(ms []recsys.Model, name string) (float64, bool) {
	for _, m := range ms {
		if m != nil && m.Name() == name {
			k, ok := recsys.ParamsOf(m)["k"]
			return k, ok
		}
	}
	return 0, false
}

// capK is the grid of k of a variant, capped like the models whose sides
// it uses.
func (v variant) capK(g recsys.Grid, c recsys.Caps) []int {
	limit := 0
	if v.item {
		limit = max(limit, c.Items)
	}
	if v.user {
		limit = max(limit, c.Users)
	}
	return recsys.CapK(g.K, limit)
}

// candidates lists the fits of a variant's search (dissertation §4.7.3):
// per k, the fsSLIM (ℓ1, ℓ2) pairs (SLIM affinity only), then every λ.
// With g.KByBaseline the search fits fewer (search).
func (v variant) candidates(g recsys.Grid, c recsys.Caps) []recsys.Params {
	lambdas := g.Lambda
	if len(lambdas) == 0 {
		lambdas = DefaultLambdas
	}
	var out []recsys.Params
	for _, k := range v.capK(g, c) {
		if v.affinity == affSLIM {
			for _, l := range g.SLIM {
				out = append(out, recsys.Params{K: k, L1: l[0], L2: l[1]})
			}
		}
		for _, l := range lambdas {
			out = append(out, recsys.Params{K: k, Options: &Options{Lambda: l}})
		}
	}
	return out
}

// search is a variant's SearchFunc: Search over its capped grid, with
// early stopping on val and p.Options (if any) as the template of every
// fit.
// The chosen model refits on the same matrix with the same options and
// λ; on all the data with the iteration count that reached the chosen θ,
// as there are no validation items left to stop on.
func (v variant) search(ctx context.Context, x *recsys.Matrix, val [][]uint32, g recsys.Grid, c recsys.Caps, p recsys.Params, onFit func()) (recsys.Choice, error) {
	fg := Grid{K: v.capK(g, c), Lambda: g.Lambda, SLIM: g.SLIM, KByBaseline: g.KByBaseline}
	if onFit != nil {
		fg.OnTrial = func(Trial) { onFit() }
	}
	given, err := optionsIn(p)
	if err != nil {
		return recsys.Choice{}, err
	}
	var o Options
	if given != nil {
		o = *given
	}
	o.Validation = val
	p.Options = &o
	best, _, err := Search(ctx, v.name, x, fg, p)
	if err != nil {
		return recsys.Choice{}, err
	}
	chosen := best.Params()
	same := o
	same.Lambda = chosen["lambda"]
	all := same
	all.Validation, all.SLIM = nil, nil // o.SLIM was fitted on x, not on all the data
	if all.Iterations = best.info.Iterations; all.Iterations == 0 {
		all.Iterations = -1 // the initial θ was best: run no iteration
	}
	k, l1, l2 := int(chosen["k"]), chosen["l1"], chosen["l2"]
	return recsys.Choice{
		Model:         best,
		Params:        recsys.Params{K: k, L1: l1, L2: l2, Options: &same},
		Refit:         recsys.Params{K: k, L1: l1, L2: l2, Options: &all},
		ValidationADG: best.info.ValidationADG,
		// OPT-ADG's early stopping ranked the chosen θ's validation
		// items already, so Tune's measures of the choice need no
		// validation pass of their own.
		ValidationRanks: best.valRanks,
	}, nil
}

// kParams is p for one k and fsSLIM pair, without the options of a
// single fit.
func kParams(p recsys.Params, k int, l1, l2 float64) recsys.Params {
	p.K, p.L1, p.L2, p.Init, p.Options = k, l1, l2, nil, nil
	return p.WithDefaults()
}

// bestSLIM fits fsSLIM with every (ℓ1, ℓ2) pair at k = p.K, warm-starting
// along ℓ1 for a fixed ℓ2, and returns the one with the highest validation
// ADG with that ADG.
func bestSLIM(ctx context.Context, x *recsys.Matrix, p recsys.Params, pairs [][2]float64, val [][]uint32, onTrial func(Trial)) (slimFit, float64, error) {
	var (
		best    slimFit
		bestADG = -1.0
		prev    recsys.Model
		prevL2  float64
	)
	for _, lp := range pairs {
		ps := p
		ps.L1, ps.L2 = lp[0], lp[1]
		ps.Init = nil
		if prev != nil && prevL2 == lp[1] {
			ps.Init = prev
		}
		m, err := recsys.New("slim")
		if err != nil {
			return slimFit{}, 0, err
		}
		if err := m.Fit(ctx, x, ps); err != nil {
			return slimFit{}, 0, err
		}
		adg, err := modelValidationADG(ctx, m, x, val)
		if err != nil {
			return slimFit{}, 0, err
		}
		fit, _ := slimFitOf(m)
		if adg > bestADG {
			best, bestADG = fit, adg
		}
		if onTrial != nil {
			onTrial(Trial{K: p.K, L1: lp[0], L2: lp[1], SLIMValidationADG: adg})
		}
		prev, prevL2 = m, fit.l2
	}
	return best, bestADG, nil
}
