package eval

import (
	"slices"
	"strconv"
	"strings"

	"recsys/recsys"
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
	// WRMFAlpha is the grid of WRMF's confidence weight α (λ stays at its
	// default 0.015).
	WRMFAlpha = []float64{1, 0.1, 0.01, 0.001}
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
	return map[string][]map[string]float64{"bpr": bpr, "wrmf": wrmf, "mfauc": MFAUCGrid}
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
