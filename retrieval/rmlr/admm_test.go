package rmlr

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/recsys-engine/recsys/retrieval/mlr"
	"github.com/recsys-engine/recsys/retrieval/rank"
)

// tinyWorkingSet builds a realistic working set: constraint batches of the
// MAP oracle on a small labelled set at a few metrics.
func tinyWorkingSet(tb testing.TB) []mlr.Constraint {
	tb.Helper()
	rng := rand.New(rand.NewPCG(7, 8))
	n, d := 14, 3
	x := mat.NewDense(n, d, nil)
	labels := make([]int, n)
	for i := 0; i < n; i++ {
		labels[i] = i % 2
		x.Set(i, 0, float64(labels[i])+0.6*rng.NormFloat64())
		x.Set(i, 1, 0.5*float64(labels[i])+rng.NormFloat64())
		x.Set(i, 2, rng.NormFloat64())
	}
	sup, err := rank.FromLabels(labels)
	if err != nil {
		tb.Fatal(err)
	}
	p := mlr.Problem{X: x, Sup: sup}
	var ws []mlr.Constraint
	for _, diag := range [][]float64{{0, 0, 0}, {1, 1, 1}, {2, 0.1, 0.5}} {
		w := mat.NewSymDense(d, nil)
		for i, v := range diag {
			w.SetSym(i, i, v)
		}
		con, err := mlr.Separate(context.Background(), p, mlr.Oracle{Loss: mlr.LossMAP}, w, 1)
		if err != nil {
			tb.Fatal(err)
		}
		ws = append(ws, con)
	}
	return ws
}

// TestADMM_Solve_matchesSubgradient: on a tiny working set the ADMM solution
// of Eq. 2.3 and a long projected sub-gradient run reach the same optimum.
func TestADMM_Solve_matchesSubgradient(t *testing.T) {
	ws := tinyWorkingSet(t)
	for _, tc := range []struct{ c, lambda float64 }{{10, 0}, {10, 0.5}, {100, 2}} {
		admm := &ADMM{Lambda: tc.lambda, MaxIter: 20000, Tol: 1e-9}
		wa, err := admm.Solve(context.Background(), ws, tc.c, nil)
		if err != nil {
			t.Fatal(err)
		}
		sg := mlr.Subgradient{Lambda: tc.lambda, MaxIter: 100000, Patience: 100000}
		wg, err := sg.Solve(context.Background(), ws, tc.c, nil)
		if err != nil {
			t.Fatal(err)
		}
		fa := mlr.Objective(wa, ws, tc.c, tc.lambda)
		fg := mlr.Objective(wg, ws, tc.c, tc.lambda)
		t.Logf("C=%v λ=%v: ADMM f=%.6f, subgradient f=%.6f, ‖W‖=%.4f\nADMM\n%v\nsubgradient\n%v", tc.c, tc.lambda, fa, fg, mat.Norm(wa, 2),
			mat.Formatted(wa, mat.Squeeze()), mat.Formatted(wg, mat.Squeeze()))
		if math.Abs(fa-fg) > 2e-3*math.Abs(fg) {
			t.Errorf("C=%v λ=%v: objective ADMM %v, subgradient %v", tc.c, tc.lambda, fa, fg)
		}
		var diff mat.Dense
		diff.Sub(wa, wg)
		if mat.Norm(&diff, 2) > 0.02*mat.Norm(wg, 2) {
			t.Errorf("C=%v λ=%v: ‖W_admm − W_sg‖ = %v, ‖W_sg‖ = %v", tc.c, tc.lambda, mat.Norm(&diff, 2), mat.Norm(wg, 2))
		}
		// W must be PSD.
		var eig mat.EigenSym
		eig.Factorize(wa, false)
		if v := eig.Values(nil); v[0] < -1e-9 {
			t.Errorf("ADMM W not PSD: eigenvalues %v", v)
		}
	}
}

// TestProxSym21_handComputed: for a diagonal A the symmetric ℓ2,1 prox is
// the row-wise shrinkage of Eq. 2.10, which keeps it diagonal.
func TestProxSym21_handComputed(t *testing.T) {
	a := mat.NewSymDense(2, []float64{3, 0, 0, 0.5})
	admm := &ADMM{}
	admm.pDense, admm.y = mat.NewDense(2, 2, nil), mat.NewDense(2, 2, nil)
	v := mat.NewSymDense(2, nil)
	admm.proxSym21(v, a, 1, 2000)
	want := mat.NewSymDense(2, []float64{2, 0, 0, 0})
	if !mat.EqualApprox(v, want, 1e-6) {
		t.Fatalf("prox = %v, want %v", mat.Formatted(v), mat.Formatted(want))
	}
}
