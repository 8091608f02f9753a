package eval

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/recsys-engine/recsys/recsys"
)

// The secondary grids of the matrix factorisation models (recsys/mf),
// searched for every number of factors in Grid.Factors (dissertation
// §4.7.3: the number of factors is the main parameter).
var (
	// BPRLambda is the grid of BPR's regularisers. The dissertation varies
	// λ_U, λ₊, λ₋ and the bias regulariser independently over these values
	// (81 combinations per number of factors); here the four are tied,
	// which keeps the search at three fits per number of factors.
	BPRLambda = []float64{0.025, 0.0025, 0.00025}
	// WRMFAlpha is the grid of WRMF's confidence weight α with λ at its
	// default 0.015, and WRMFStrong the settings tried besides: a larger
	// confidence with a λ that matters against a row's weight n + α|Iᵤ|
	// (0.015 is negligible there, which left WRMF nearly unregularised and
	// behind on sparse data: Last.fm fold-1 ADG 0.1937 at α = 1 against
	// 0.2098 at α = 10, λ = 30; docs/evaluation.md "Matrix factorisation on sparse data").
	WRMFAlpha  = []float64{1, 0.1, 0.01, 0.001}
	WRMFStrong = []map[string]float64{{"alpha": 10, "lambda": 30}}
	// IALSGrid is iALS's secondary grid, every combination of these values
	// (Rendle et al. 2022: α₀ and λ on a log scale with ν = 1, 16
	// epochs). (α₀, λ) = (0.1, 0.03) won on MovieLens 100K, (0.1, 0.01)
	// on the sparser Last.fm, where (0.01, 0.03) came next (docs/evaluation.md
	// "Matrix factorisation").
	IALSGrid = map[string][]float64{"alpha0": {0.01, 0.1}, "lambda": {0.01, 0.03, 0.1}}
	// MFAUCGrid is MFAUC's secondary grid: the plain AUC objective (φ the
	// identity) with λ ∈ {0.1, 0.01}, and the local-AUC tanh weighting
	// φ(x) = tanh(ρx), ρ = 1, with λ = 0.1 (seed 003 §2.1); the logistic
	// loss with β = 1, step 2, 30 iterations and the other parameters at
	// their defaults (recsys/mf). The tanh runs cost about twice as much.
	MFAUCGrid = []map[string]float64{
		{"lambda": 0.1, "rho": 0},
		{"lambda": 0.01, "rho": 0},
		{"lambda": 0.1, "rho": 1},
	}
)

// mfExtra is the secondary grids above by model (Grid.Extra).
func mfExtra() map[string][]map[string]float64 {
	var bpr, wrmf []map[string]float64
	for _, l := range BPRLambda {
		bpr = append(bpr, map[string]float64{"lambda": l})
	}
	for _, a := range WRMFAlpha {
		wrmf = append(wrmf, map[string]float64{"alpha": a})
	}
	for _, e := range WRMFStrong {
		wrmf = append(wrmf, maps.Clone(e))
	}
	return map[string][]map[string]float64{"bpr": bpr, "wrmf": wrmf, "ials": product(IALSGrid), "mfauc": MFAUCGrid}
}

// product is every combination of the values of grid's keys.
func product(grid map[string][]float64) []map[string]float64 {
	out := []map[string]float64{{}}
	for _, k := range slices.Sorted(maps.Keys(grid)) {
		var next []map[string]float64
		for _, m := range out {
			for _, v := range grid[k] {
				c := maps.Clone(m)
				c[k] = v
				next = append(next, c)
			}
		}
		out = next
	}
	return out
}

// ParseExtra reads secondary grids written "model.key=v1,v2;model.key=v3"
// (the eval command's --extra): each model named gets every combination
// of the values of its keys, replacing its entry in base (DefaultGrid's
// when nil); the other models keep theirs.
func ParseExtra(s string, base map[string][]map[string]float64) (map[string][]map[string]float64, error) {
	if base == nil {
		base = mfExtra()
	}
	out := maps.Clone(base)
	grids := map[string]map[string][]float64{}
	for _, part := range strings.Split(s, ";") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		lhs, vals, ok := strings.Cut(part, "=")
		model, key, ok2 := strings.Cut(strings.TrimSpace(lhs), ".")
		if !ok || !ok2 || model == "" || key == "" {
			return nil, fmt.Errorf("%q is not model.key=v1,v2", part)
		}
		for _, f := range strings.Split(vals, ",") {
			v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
			if err != nil {
				return nil, fmt.Errorf("%q: %w", part, err)
			}
			if grids[model] == nil {
				grids[model] = map[string][]float64{}
			}
			grids[model][key] = append(grids[model][key], v)
		}
	}
	for model, g := range grids {
		out[model] = product(g)
	}
	return out, nil
}

// describeExtra renders the values of every Params.Extra key searched, as
// "alpha∈{1,0.1}", keys sorted.
func describeExtra(cfgs []recsys.Params) []string {
	vals := map[string][]string{}
	for _, p := range cfgs {
		for k, v := range p.Extra {
			if s := strconv.FormatFloat(v, 'g', -1, 64); !slices.Contains(vals[k], s) {
				vals[k] = append(vals[k], s)
			}
		}
	}
	var parts []string
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range vals {
			if !yield(k) {
				return
			}
		}
	}) {
		parts = append(parts, k+"∈{"+strings.Join(vals[k], ",")+"}")
	}
	return parts
}
