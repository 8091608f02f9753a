package mf

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// setupMul is setup followed by mul(x) into ap, bit for bit, for WRMF's
// and iALS's weights, and on a row without positives.
func TestALSSolver_setupMulIsSetupThenMul(t *testing.T) {
	const k, n = 6, 40
	rng := rand.New(rand.NewPCG(3, 5))
	y := make([]float64, n*k)
	gaussian(rng, y, 1)
	g := gram(y, k)
	x := make([]float64, k)
	gaussian(rng, x, 1)
	for _, w := range []alsWeights{
		{gram: 1, pos: 4, rhs: 5, lambda: 0.3},                       // WRMF, α = 4
		{gram: 0.2, pos: 1, rhs: 1, lambda: 0.01, nu: 1, unobs: 0.2}, // iALS
	} {
		for _, rows := range [][]uint32{{1, 4, 9, 17, 33, 39}, {}} {
			want := newALSSolver(w, k, n)
			want.setup(rows, y)
			want.mul(g, rows, y, x, want.ap)
			got := newALSSolver(w, k, n)
			got.setupMul(g, rows, y, x)
			if got.lambda != want.lambda || !slices.Equal(got.b, want.b) || !slices.Equal(got.ap, want.ap) {
				t.Errorf("weights %+v, rows %v: setupMul gives λ %g, b %v, Ax %v; setup and mul give %g, %v, %v",
					w, rows, got.lambda, got.b, got.ap, want.lambda, want.b, want.ap)
			}
		}
	}
}
