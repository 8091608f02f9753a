package eval

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"recsys/api"
	"recsys/recsys"
)

// expandModels replaces every model name that stands for several report
// rows by their registry names (febr → its seven variants, Table 4.3),
// dropping repeats, so that each variant is one row.
func expandModels(names []string) []string {
	var out []string
	for _, name := range names {
		vs := recsys.Variants(name)
		if len(vs) == 0 {
			vs = []recsys.Variant{{Name: name}}
		}
		for _, v := range vs {
			if !slices.Contains(out, v.Name) {
				out = append(out, v.Name)
			}
		}
	}
	return out
}

// rowName is the model and variant a registry name reports under: a FEBR
// variant is model "febr" with its label ("FEBRi-slim"), any other model
// its own name.
func rowName(name string) (model, variant string) {
	if v, ok := recsys.FEBRVariantOf(name); ok {
		return recsys.FEBRModel, v.Label
	}
	return name, ""
}

// labelRow sets the model and variant of a report row fitted as name.
func labelRow(row *api.ReportRow, name string) {
	row.Model, row.Variant = rowName(name)
}

// fileName names a row's --dump files: the variant when there is one.
func fileName(name string) string {
	m, v := rowName(name)
	if v != "" {
		return v
	}
	return m
}

// modelConfigs lists the fits a model's search makes: configs for most
// models; for a FEBR variant, per k of the grid (capped like the models
// whose sides it uses), the fsSLIM (ℓ1, ℓ2) pairs (SLIM affinity only)
// and then every λ of the grid (dissertation §4.7.3).
func modelConfigs(name string, g Grid, itemCap, userCap int) []recsys.Params {
	v, ok := recsys.FEBRVariantOf(name)
	if !ok {
		return configs(name, g, itemCap, userCap)
	}
	limit := 0
	if v.Item {
		limit = max(limit, itemCap)
	}
	if v.User {
		limit = max(limit, userCap)
	}
	var out []recsys.Params
	for _, k := range capGrid(g.K, limit) {
		if v.Affinity == "slim" {
			for _, l2 := range g.L2 {
				for _, l1 := range g.L1 {
					out = append(out, recsys.Params{K: k, L1: l1, L2: l2})
				}
			}
		}
		for _, l := range g.Lambda {
			out = append(out, recsys.Params{K: k, FEBR: &recsys.FEBROptions{Lambda: l}})
		}
	}
	return out
}

// searchModel runs the hyper-parameter search of one model on one fold.
func searchModel(ctx context.Context, name string, s *Split, cache *recsys.NeighbourCache, cfgs []recsys.Params, febr recsys.FEBROptions, dump bool, step func()) (*foldResult, error) {
	if !recsys.IsFEBR(name) {
		return search(ctx, name, s, cache, cfgs, dump, step)
	}
	return searchFEBR(ctx, name, s, cache, cfgs, febr, dump, step)
}

// FEBRSeed seeds OPT-ADG in the evaluation unless Options.FEBR.Seed is set.
const FEBRSeed = 1

// searchFEBR is search for a FEBR variant: recsys.SearchFEBR over the
// grid in cfgs (features built once per k and shared by the λ values,
// early stopping on the fold's validation items), then the chosen
// configuration is fitted again from scratch, which gives the training
// time, and evaluated on the test set.
func searchFEBR(ctx context.Context, name string, s *Split, cache *recsys.NeighbourCache, cfgs []recsys.Params, tmpl recsys.FEBROptions, dump bool, step func()) (*foldResult, error) {
	if tmpl.Seed == 0 {
		tmpl.Seed = FEBRSeed
	}
	tmpl.Validation = s.Validation
	var g recsys.FEBRGrid
	add := func(list []float64, v float64) []float64 {
		if !slices.Contains(list, v) {
			list = append(list, v)
		}
		return list
	}
	var l1s, l2s []float64
	for _, p := range cfgs {
		if !slices.Contains(g.K, p.K) {
			g.K = append(g.K, p.K)
		}
		if p.FEBR != nil {
			g.Lambda = add(g.Lambda, p.FEBR.Lambda)
			continue
		}
		if pair := [2]float64{p.L1, p.L2}; !slices.Contains(g.SLIM, pair) {
			g.SLIM = append(g.SLIM, pair)
			l1s, l2s = add(l1s, p.L1), add(l2s, p.L2)
		}
	}
	g.OnTrial = func(recsys.FEBRTrial) { step() }
	so := tmpl
	p := recsys.Params{Cache: cache, FEBR: &so}
	best, _, err := recsys.SearchFEBR(ctx, name, s.Train, g, p)
	if err != nil {
		return nil, fmt.Errorf("eval: search %s: %w", name, err)
	}
	chosen := recsys.ParamsOf(best)
	o := tmpl
	o.Lambda = chosen["lambda"]
	refit := recsys.Params{K: int(chosen["k"]), L1: chosen["l1"], L2: chosen["l2"], FEBR: &o}
	m, err := recsys.New(name)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	if err := m.Fit(ctx, s.Train, refit); err != nil {
		return nil, fmt.Errorf("eval: fit %s: %w", name, err)
	}
	res := &foldResult{
		grid:   describeFEBRGrid(g, l1s, l2s),
		params: recsys.ParamsOf(m), valADG: best.Info().ValidationADG,
		trainSeconds: time.Since(start).Seconds(),
	}
	if err := res.measure(ctx, m, s, dump); err != nil {
		return nil, err
	}
	step()
	return res, nil
}

func describeFEBRGrid(g recsys.FEBRGrid, l1s, l2s []float64) string {
	list := func(vs []float64) string {
		parts := make([]string, len(vs))
		for k, v := range vs {
			parts[k] = strconv.FormatFloat(v, 'g', -1, 64)
		}
		return strings.Join(parts, ",")
	}
	ks := make([]string, len(g.K))
	for k, v := range g.K {
		ks[k] = strconv.Itoa(v)
	}
	out := "k∈{" + strings.Join(ks, ",") + "} × lambda∈{" + list(g.Lambda) + "}"
	if len(g.SLIM) > 0 {
		out += " × slim l1∈{" + list(l1s) + "}, l2∈{" + list(l2s) + "} (per k, by SLIM's validation ADG)"
	}
	return out
}
