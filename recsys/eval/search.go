package eval

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"recsys/recsys"
	"recsys/recsys/metrics"
)

// Grid is the hyper-parameter search space of dissertation §4.7.3: the main
// parameter k, and the secondary fsSLIM constants tuned for every k.
type Grid struct {
	K      []int
	L1, L2 []float64
	// Factors is the main parameter of bpr, wrmf and mfauc, the number of
	// factors; their secondary grids are in mfgrid.go.
	Factors []int
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
		// §4.7.3: λ ∈ {10⁻⁴, …, 10⁻¹} for FEBR.
		Lambda: slices.Clone(recsys.DefaultFEBRLambdas),
	}
}

// capGrid keeps the values of k below limit and the first one at or above
// it: every larger k gives the same model as that one ("capped by the
// data": no list is longer than limit).
func capGrid(ks []int, limit int) []int {
	ks = slices.Sorted(slices.Values(ks))
	var out []int
	for _, k := range ks {
		out = append(out, k)
		if k >= limit {
			break
		}
	}
	return out
}

// configs lists the candidate parameters of a model. itemCap is the longest
// item neighbour list and userCap = |U| − 1. Models this harness has no
// grid for are fitted once with their defaults.
func configs(name string, g Grid, itemCap, userCap int) []recsys.Params {
	var out []recsys.Params
	ks := func(limit int) []int { return capGrid(g.K, limit) }
	switch name {
	case "popular":
		out = append(out, recsys.Params{})
	case "itemknn", "kunn-i":
		for _, k := range ks(itemCap) {
			out = append(out, recsys.Params{K: k})
		}
	case "userknn", "kunn-u":
		for _, k := range ks(userCap) {
			out = append(out, recsys.Params{K: k})
		}
	case "kunn":
		for _, k := range ks(max(itemCap, userCap)) {
			out = append(out, recsys.Params{K: k})
		}
	case "slim":
		for _, k := range ks(itemCap) {
			for _, l2 := range g.L2 {
				for _, l1 := range g.L1 {
					out = append(out, recsys.Params{K: k, L1: l1, L2: l2})
				}
			}
		}
	case "bpr", "wrmf", "mfauc":
		out = mfConfigs(name, g.Factors)
	default:
		out = append(out, recsys.Params{})
	}
	return out
}

// describeGrid renders the searched configurations as "k∈{10,20} ×
// l1∈{1,0.1} × l2∈{1}" for the report.
func describeGrid(cfgs []recsys.Params) string {
	var ks, l1s, l2s []string
	add := func(list []string, v string) []string {
		if !slices.Contains(list, v) {
			list = append(list, v)
		}
		return list
	}
	for _, p := range cfgs {
		if p.K > 0 {
			ks = add(ks, strconv.Itoa(p.K))
		}
		if p.L1 != 0 || p.L2 != 0 {
			l1s = add(l1s, strconv.FormatFloat(p.L1, 'g', -1, 64))
			l2s = add(l2s, strconv.FormatFloat(p.L2, 'g', -1, 64))
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

// foldResult is one model on one fold.
type foldResult struct {
	grid         string
	params       map[string]float64
	valADG       float64
	test         metrics.Values
	trainSeconds float64
	// Filled when dumping: ranks of the validation and test items, and the
	// top-100 lists.
	ranks [][][]int
	tops  [][]scored
}

// search runs the two-level search of §4.7.3 for one model on one fold:
// every configuration is fitted on the training matrix and scored on the
// validation set; the one with the highest validation ADG (the first on a
// tie, so the smaller k) is fitted again from scratch, which gives the
// training time, and evaluated on the test set. step is called after
// every fit.
func search(ctx context.Context, name string, s *Split, cache *recsys.NeighbourCache, cfgs []recsys.Params, dump bool, step func()) (*foldResult, error) {
	pop := s.Train.Popularity()
	var (
		best, prevP recsys.Params
		prev        recsys.Model
	)
	bestADG := -1.0
	for _, p := range cfgs {
		m, err := recsys.New(name)
		if err != nil {
			return nil, err
		}
		p.Cache = cache
		if prev != nil && prevP.K == p.K && prevP.L2 == p.L2 {
			// Consecutive configurations differ in ℓ1 only: warm start
			// along the regularisation path (slim).
			p.Init = prev
		}
		if err := m.Fit(ctx, s.Train, p); err != nil {
			return nil, fmt.Errorf("eval: fit %s: %w", name, err)
		}
		ranks, _, err := rankSets(ctx, m, s.Train, pop, [][][]uint32{s.Validation}, 0)
		if err != nil {
			return nil, err
		}
		v, _ := meanValues(ranks[0], s.Train)
		if v[metrics.MADG] > bestADG {
			best, bestADG = p, v[metrics.MADG]
		}
		prev, prevP = m, p
		step()
	}
	m, err := recsys.New(name)
	if err != nil {
		return nil, err
	}
	best.Cache, best.Init = nil, nil
	start := time.Now()
	if err := m.Fit(ctx, s.Train, best); err != nil {
		return nil, fmt.Errorf("eval: fit %s: %w", name, err)
	}
	res := &foldResult{grid: describeGrid(cfgs), params: recsys.ParamsOf(m), valADG: bestADG, trainSeconds: time.Since(start).Seconds()}
	if err := res.measure(ctx, m, s, dump); err != nil {
		return nil, err
	}
	step()
	return res, nil
}

// measure ranks the validation and test items with the fitted model m, ties
// broken by training popularity, and keeps the test measures (and, with
// dump, every rank and the top-100 lists).
func (res *foldResult) measure(ctx context.Context, m recsys.Model, s *Split, dump bool) error {
	top := 0
	if dump {
		top = 100
	}
	ranks, tops, err := rankSets(ctx, m, s.Train, s.Train.Popularity(), [][][]uint32{s.Validation, s.Test}, top)
	if err != nil {
		return err
	}
	res.test, _ = meanValues(ranks[1], s.Train)
	if dump {
		res.ranks, res.tops = ranks, tops
	}
	return nil
}
