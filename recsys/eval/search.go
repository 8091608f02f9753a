package eval

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/recsys-engine/recsys/recsys"
	"github.com/recsys-engine/recsys/recsys/febr"
	"github.com/recsys-engine/recsys/recsys/metrics"
)

// Grid is the offline evaluation's hyper-parameter search space of
// dissertation §4.7.3: the main parameter k, and the secondary fsSLIM
// constants tuned for every k. Tune searches its recsys.Grid (space).
type Grid struct {
	K      []int
	L1, L2 []float64
	// Factors is the main parameter of bpr, wrmf and mfauc, the number of
	// factors; Extra their secondary grids by model (mfgrid.go).
	Factors []int
	Extra   map[string][]map[string]float64
	// Lambda is FEBR's secondary grid, the ℓ2 constant λ on θ.
	Lambda []float64
}

// DefaultGrid is the grid of §4.7.3: k ∈ {10, …, 1000} and the SLIM ℓ1 and
// ℓ2 constants over {10, 1, 0.1}.
func DefaultGrid() Grid {
	return Grid{
		K:  []int{10, 20, 50, 100, 200, 500, 1000},
		L1: []float64{10, 1, 0.1},
		L2: []float64{10, 1, 0.1},
		// §4.7.3: factors ∈ {5, 10, 20, 50, 100, 200} for BPR and WRMF.
		Factors: []int{5, 10, 20, 50, 100, 200},
		Extra:   mfExtra(),
		// §4.7.3: λ ∈ {10⁻⁴, …, 10⁻¹} for FEBR.
		Lambda: slices.Clone(febr.DefaultLambdas),
	}
}

// withDefaults fills the empty fields of g from DefaultGrid.
func (g Grid) withDefaults() Grid {
	d := DefaultGrid()
	g.K, g.L1, g.L2 = orDefault(g.K, d.K), orDefault(g.L1, d.L1), orDefault(g.L2, d.L2)
	g.Factors, g.Lambda = orDefault(g.Factors, d.Factors), orDefault(g.Lambda, d.Lambda)
	if len(g.Extra) == 0 {
		g.Extra = d.Extra
	}
	return g
}

// orDefault is s, or d when s is empty.
func orDefault[S ~[]E, E any](s, d S) S {
	if len(s) == 0 {
		return d
	}
	return s
}

// space is g as the search space of Tune: the fsSLIM pairs are L2 × L1
// with ℓ1 varying fastest, so that consecutive fits warm-start along ℓ1.
func (g Grid) space() recsys.Grid {
	var pairs [][2]float64
	for _, l2 := range g.L2 {
		for _, l1 := range g.L1 {
			pairs = append(pairs, [2]float64{l1, l2})
		}
	}
	return recsys.Grid{K: g.K, SLIM: pairs, Factors: g.Factors, Extra: g.Extra, Lambda: g.Lambda}
}

// configs lists the candidate parameters of a model on g (Tune's list).
// itemCap is the longest item neighbour list and userCap = |U| − 1.
// Models with no grid are fitted once with their defaults.
func configs(name string, g Grid, itemCap, userCap int) []recsys.Params {
	kind, err := recsys.KindOf(name)
	if err != nil {
		return nil
	}
	return candidates(kind, g.space(), recsys.Caps{Items: itemCap, Users: userCap})
}

// describeGrid renders the searched configurations as "k∈{10,20} ×
// l1∈{1,0.1} × l2∈{1}" for the report.
func describeGrid(cfgs []recsys.Params) string {
	if slices.ContainsFunc(cfgs, func(p recsys.Params) bool { return febrOptions(p) != nil }) {
		return describeFEBRGrid(cfgs)
	}
	var ks, l1s, l2s []string
	for _, p := range cfgs {
		if p.K > 0 {
			ks = appendNew(ks, strconv.Itoa(p.K))
		}
		if p.L1 != 0 || p.L2 != 0 {
			l1s = appendNew(l1s, formatFloat(p.L1))
			l2s = appendNew(l2s, formatFloat(p.L2))
		}
	}
	var parts []string
	for _, d := range []struct {
		name string
		vals []string
	}{{"k", ks}, {"l1", l1s}, {"l2", l2s}} {
		if len(d.vals) > 0 {
			parts = append(parts, d.name+"∈{"+strings.Join(d.vals, ",")+"}")
		}
	}
	parts = append(parts, describeExtra(cfgs)...)
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, " × ")
}

// describeFEBRGrid renders the configurations of a FEBR variant: k and λ,
// and the fsSLIM pairs chosen per k (SLIM affinity).
func describeFEBRGrid(cfgs []recsys.Params) string {
	var ks, lambdas, l1s, l2s []string
	for _, p := range cfgs {
		ks = appendNew(ks, strconv.Itoa(p.K))
		if o := febrOptions(p); o != nil {
			lambdas = appendNew(lambdas, formatFloat(o.Lambda))
			continue
		}
		l1s, l2s = appendNew(l1s, formatFloat(p.L1)), appendNew(l2s, formatFloat(p.L2))
	}
	out := "k∈{" + strings.Join(ks, ",") + "} × lambda∈{" + strings.Join(lambdas, ",") + "}"
	if len(l1s) > 0 {
		out += " × slim l1∈{" + strings.Join(l1s, ",") + "}, l2∈{" + strings.Join(l2s, ",") + "} (per k, by SLIM's validation ADG)"
	}
	return out
}

// appendNew appends v to list unless it is there.
func appendNew(list []string, v string) []string {
	if !slices.Contains(list, v) {
		list = append(list, v)
	}
	return list
}

func formatFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// foldResult is one model on one fold.
type foldResult struct {
	grid   string
	params map[string]float64
	valADG float64
	// tuningADG is the best validation ADG of the search, on the users
	// it tuned on (Tuned.TuningADG).
	tuningADG float64
	test      metrics.Values
	// userSE is the standard error of each test measure over the test
	// users, reported for a protocol with a single split (Time).
	userSE       metrics.Values
	trainSeconds float64
	// extended and atEdge are Tuned's: the values searched past the
	// grid's ends, and the chosen ones still at an end; skipped and
	// points its time budget's account (Tuned.Skipped, Points).
	extended, atEdge, skipped []string
	points                    []PointTime
	// trials are the blend search's candidates θ with their estimates
	// (febr.BlendInfo.Trials), for the report; nil for other kinds.
	trials []febr.BlendTrial
	// Filled when dumping: ranks of the validation and test items, and the
	// top-100 lists.
	ranks [][][]int
	tops  [][]recsys.Neighbour
}

// FEBRSeed seeds OPT-ADG in the evaluation unless Options.FEBR.Seed is set.
const FEBRSeed = 1

// search runs the two-level search of §4.7.3 for one model on one fold
// (Tune with t, the full grid); the chosen configuration is fitted again
// from scratch, which gives the training time, and evaluated on the test
// set. t.Options is the template of the FEBR fits (seeded by FEBRSeed unless
// set). step is called after the final fit.
func search(ctx context.Context, name string, s *Split, sh *sharedSearches, tuning Tuning, dump bool, step func()) (*foldResult, error) {
	if fo := febr.CopyOptions(tuning.Options); fo.Seed == 0 {
		fo.Seed = FEBRSeed
		tuning.Options = &fo
	}
	if v, ok := febr.VariantOf(name); ok {
		var err error
		if tuning, err = fromTunedBases(ctx, v, sh, tuning); err != nil {
			return nil, err
		}
	}
	t, err := sh.tune(ctx, name, tuning)
	if err != nil {
		return nil, err
	}
	m, err := recsys.New(name)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	if err := m.Fit(ctx, t.Train, t.Params); err != nil {
		return nil, fmt.Errorf("eval: fit %s: %w", name, err)
	}
	res := &foldResult{grid: describeGrid(t.Candidates), params: recsys.ParamsOf(m), valADG: t.ValidationADG, tuningADG: t.TuningADG, trainSeconds: time.Since(start).Seconds(),
		extended: t.Extended, atEdge: t.AtEdge, skipped: t.Skipped, points: t.Points}
	if b, ok := t.Model.(*febr.Blend); ok {
		res.trials = b.Info().Trials
	}
	if sh.hold != nil {
		if res.valADG, err = sh.hold.pooled(ctx, name, t.Refit, t.ValidationADG, t.SelectionUsers); err != nil {
			return nil, err
		}
	}
	if err := res.measure(ctx, m, t.Train, s, dump); err != nil {
		return nil, err
	}
	step()
	return res, nil
}

// fromTunedBases is tuning for FEBR variant v starting from its bases'
// tuned settings, searched once per fold (sh): its k is its aggsum
// baselines' (both sides' for FEBRiu) and, over the SLIM affinity, slim's
// k and fsSLIM pair with slim's fit as the affinity, so that OPT-ADG
// starts from the predictor slim's own row measures (θ = 1 on aggsum is
// SLIM exactly, §4.5) and searches λ alone; its early stopping keeps the
// best θ, so FEBR is never below that start on the users it tunes on
// (under the users protocol its start is not SLIM's to the bit: it fits
// on the validation users' live rows).
// Searched on a grid of its own, FEBRi-slim started from k=500, l2=10
// where slim chose k=100, l2=40 past the grid's end, and fell below slim
// (docs/evaluation.md "FEBR on the tuned base").
func fromTunedBases(ctx context.Context, v febr.VariantInfo, sh *sharedSearches, tuning Tuning) (Tuning, error) {
	fo := febr.CopyOptions(tuning.Options)
	g := tuning.Grid
	g.K, g.KByBaseline = nil, true
	for _, b := range v.Baselines {
		bt, err := sh.tune(ctx, b, tuning)
		if err != nil {
			return tuning, err
		}
		fo.Baselines = append(fo.Baselines, bt.Model)
		g.K = appendInt(g.K, bt.Params.K)
	}
	if v.Affinity == "slim" {
		bt, err := sh.tune(ctx, "slim", tuning)
		if err != nil {
			return tuning, err
		}
		fo.SLIM = bt.Model
		g.K = appendInt(g.K, bt.Params.K)
		g.SLIM = [][2]float64{{bt.Params.L1, bt.Params.L2}}
	}
	slices.Sort(g.K)
	tuning.Grid, tuning.Options, tuning.fixedK = g, &fo, true
	return tuning, nil
}

// appendInt appends v to s unless it is there.
func appendInt(s []int, v int) []int {
	if slices.Contains(s, v) {
		return s
	}
	return append(s, v)
}

// measure ranks the validation and test items of s with the model m fitted
// on train (s.Train, or FEBR's under the users protocol), ties broken by
// training popularity, the held-out users of the users protocol from their
// live histories, and keeps the test measures, their standard errors over
// the test users (and, with dump, every rank and the top-100 lists).
func (res *foldResult) measure(ctx context.Context, m recsys.Model, train *recsys.Matrix, s *Split, dump bool) error {
	top := 0
	if dump {
		top = 100
	}
	ranks, tops, err := recsys.RankHeldOutLive(ctx, m, train, s.Live, train.Popularity(), [][][]uint32{s.Validation, s.Test}, top)
	if err != nil {
		return err
	}
	res.test, _ = meanValues(ranks[1], train, s.Live)
	res.userSE = userSE(ranks[1], train, s.Live)
	if dump {
		res.ranks, res.tops = ranks, tops
	}
	return nil
}
