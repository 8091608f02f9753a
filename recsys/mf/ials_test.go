package mf

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/recsys-engine/recsys/recsys"
)

// TestALSSolver_cgEqualsExact: on a small random symmetric positive
// definite system of each weighting (WRMF's and iALS's), k steps of
// conjugate gradient from zero reach the Cholesky solution (CG is exact in
// k steps up to rounding), and both equal a dense solve of A x = b built
// independently with gonum/mat from the formula in alsWeights' comment.
func TestALSSolver_cgEqualsExact(t *testing.T) {
	const k, n = 8, 30
	y, g := alsFixture(11, k, n, 0.7)
	rows := []uint32{1, 4, 5, 9, 13, 20, 21, 29}
	for _, w := range []alsWeights{
		{gram: 1, pos: 3, rhs: 4, lambda: 0.2},
		{gram: 0.3, pos: 1, rhs: 1, lambda: 0.05, nu: 1, unobs: 0.3},
		{gram: 0.01, pos: 1, rhs: 1, lambda: 0.5, nu: 0.5, unobs: 0.01},
	} {
		s := newALSSolver(w, k, n)
		exact := make([]float64, k)
		s.exact(g, rows, y, exact)
		viaCG := make([]float64, k)
		s.cg(g, rows, y, viaCG, k)

		lam := w.lambda * math.Pow(float64(len(rows))+w.unobs*n, w.nu)
		Y := mat.NewDense(n, k, slices.Clone(y))
		var A mat.Dense
		A.Mul(Y.T(), Y)
		A.Scale(w.gram, &A)
		b := mat.NewVecDense(k, nil)
		for _, i := range rows {
			yi := mat.NewVecDense(k, slices.Clone(y[int(i)*k:int(i+1)*k]))
			var outer mat.Dense
			outer.Outer(w.pos, yi, yi)
			A.Add(&A, &outer)
			b.AddScaledVec(b, w.rhs, yi)
		}
		for f := range k {
			A.Set(f, f, A.At(f, f)+lam)
		}
		var want mat.VecDense
		if err := want.SolveVec(&A, b); err != nil {
			t.Fatal(err)
		}
		for f := range k {
			tol := 1e-8 * math.Max(1, math.Abs(want.AtVec(f)))
			if math.Abs(exact[f]-want.AtVec(f)) > tol || math.Abs(viaCG[f]-want.AtVec(f)) > tol {
				t.Fatalf("%+v: exact %v, CG %v, dense solve %v", w, exact, viaCG, want.RawVector().Data)
			}
		}
	}
}

// ialsLoss is Rendle et al.'s (2022) loss with frequency-scaled
// regularisation, summed cell by cell over the dense matrix.
func ialsLoss(x *recsys.Matrix, f *factors, c ialsConfig) float64 {
	m, n := x.Users(), x.Items()
	loss := 0.0
	for u := range m {
		for i := range n {
			yhat := dot(f.userVec(u), f.itemVec(i))
			if contains(x.Row(u), uint32(i)) {
				loss += (yhat - 1) * (yhat - 1)
			}
			loss += c.alpha0 * yhat * yhat
		}
		loss += c.lambda * math.Pow(float64(len(x.Row(u)))+c.alpha0*float64(n), c.nu) * dot(f.userVec(u), f.userVec(u))
	}
	for i := range n {
		loss += c.lambda * math.Pow(float64(len(x.Col(i)))+c.alpha0*float64(m), c.nu) * dot(f.itemVec(i), f.itemVec(i))
	}
	return loss
}

// ialsGradNorm is the largest |∂loss/∂w| over one side's factors, from the
// derivative of ialsLoss taken by hand: for user u,
// 2Σᵢ∈Iᵤ (ŷ − 1)hᵢ + 2α₀Σᵢ ŷhᵢ + 2λᵤwᵤ (items symmetric).
func ialsGradNorm(x *recsys.Matrix, f *factors, c ialsConfig, users bool) float64 {
	m, n := x.Users(), x.Items()
	rows, vec, other, nOther, rowOf := m, f.userVec, f.itemVec, n, x.Row
	if !users {
		rows, vec, other, nOther, rowOf = n, f.itemVec, f.userVec, m, x.Col
	}
	worst := 0.0
	grad := make([]float64, f.k)
	for r := range rows {
		clear(grad)
		for j := range nOther {
			yhat := dot(vec(r), other(j))
			coef := 2 * c.alpha0 * yhat
			if contains(rowOf(r), uint32(j)) {
				coef += 2 * (yhat - 1)
			}
			axpy(coef, other(j), grad)
		}
		lam := c.lambda * math.Pow(float64(len(rowOf(r)))+c.alpha0*float64(nOther), c.nu)
		axpy(2*lam, vec(r), grad)
		for _, g := range grad {
			worst = max(worst, math.Abs(g))
		}
	}
	return worst
}

// TestIALS_sweepsDescendTheLoss: from the random start, each exact
// half-sweep leaves that side at a stationary point of the stated loss
// (every gradient component ≤ 1e-9, so the solver's regularisation is the
// loss's), and no sweep, exact or of 3 CG steps, increases the loss.
func TestIALS_sweepsDescendTheLoss(t *testing.T) {
	x := synthetic(t, 3, 40, 30, 4, 2)
	for _, nu := range []float64{0, 0.5, 1} {
		c, err := ialsConfigFrom(recsys.Params{K: 5, Extra: map[string]float64{"alpha0": 0.2, "lambda": 0.03, "nu": nu, "sigma": 1}})
		if err != nil {
			t.Fatal(err)
		}
		var f factors
		tr := newIALSTrainer(x, &c, &f)
		ctx := context.Background()
		prev := ialsLoss(x, &f, c)
		for step, s := range []struct{ users, exact bool }{
			{true, true}, {false, true}, {true, false}, {false, false}, {true, true}, {false, true},
		} {
			if err := tr.sweep(ctx, s.users, s.exact); err != nil {
				t.Fatal(err)
			}
			loss := ialsLoss(x, &f, c)
			t.Logf("ν=%g step %d (users %v, exact %v): loss %.6f → %.6f", nu, step, s.users, s.exact, prev, loss)
			if loss > prev*(1+1e-12) {
				t.Errorf("ν=%g step %d (users %v, exact %v): loss rose %.9f → %.9f", nu, step, s.users, s.exact, prev, loss)
			}
			if g := ialsGradNorm(x, &f, c, s.users); s.exact && g > 1e-9 {
				t.Errorf("ν=%g step %d: gradient %.3g after an exact sweep", nu, step, g)
			}
			prev = loss
		}
	}
}

// TestIALS_frequencyScaledLambdaByHand: one factor on a 3×3 matrix, so the
// normal equations are scalar and solved by hand. α₀ = 0.1, λ = 0.2, ν = 1;
// rows u0 = {0, 2}, u1 = {1}, u2 = {0, 1, 2}.
//
// Users, with h = (0.5, 1, 2): HᵀH = 5.25, α₀HᵀH = 0.525, and
// λᵤ = 0.2(|Iᵤ| + 0.1·3):
//
//	u0: (0.525 + 0.25 + 4 + 0.2·2.3) w = 0.5 + 2  → w = 2.5/5.235
//	u1: (0.525 + 1 + 0.2·1.3) w = 1              → w = 1/1.785
//	u2: (0.525 + 5.25 + 0.2·3.3) w = 3.5         → w = 3.5/6.435
//
// Items, with w = (1, −0.5, 2): WᵀW = 5.25, item 0's users {0, 2}, item 1's
// {1, 2}, item 2's {0, 2}, λᵢ = 0.2(|Uᵢ| + 0.1·3):
//
//	i0, i2: (0.525 + 1 + 4 + 0.46) h = 3       → h = 3/5.985
//	i1:     (0.525 + 0.25 + 4 + 0.46) h = 1.5  → h = 1.5/5.235
func TestIALS_frequencyScaledLambdaByHand(t *testing.T) {
	x, err := recsys.NewMatrix(3, 3, []recsys.Pair{{User: 0, Item: 0}, {User: 0, Item: 2}, {User: 1, Item: 1},
		{User: 2, Item: 0}, {User: 2, Item: 1}, {User: 2, Item: 2}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := ialsConfigFrom(recsys.Params{K: 1, Extra: map[string]float64{"alpha0": 0.1, "lambda": 0.2, "nu": 1}})
	if err != nil {
		t.Fatal(err)
	}
	var f factors
	tr := newIALSTrainer(x, &c, &f)
	check := func(what string, got, want []float64) {
		t.Helper()
		for i := range want {
			if math.Abs(got[i]-want[i]) > 1e-12 {
				t.Fatalf("%s: %v, by hand %v", what, got, want)
			}
		}
	}
	copy(f.item, []float64{0.5, 1, 2})
	if err := tr.sweep(context.Background(), true, true); err != nil {
		t.Fatal(err)
	}
	check("users", f.user, []float64{2.5 / 5.235, 1 / 1.785, 3.5 / 6.435})
	copy(f.user, []float64{1, -0.5, 2})
	if err := tr.sweep(context.Background(), false, true); err != nil {
		t.Fatal(err)
	}
	check("items", f.item, []float64{3 / 5.985, 1.5 / 5.235, 3 / 5.985})
	// The same through the fitted model's fold-in (λᵤ with |I| = 3).
	copy(f.item, []float64{0.5, 1, 2})
	m := &IALS{cfg: c, f: f, gram: gram(f.item, 1)}
	check("fold-in of u0", m.FoldIn([]uint32{0, 2}), []float64{2.5 / 5.235})
}

// alsFixture is n random rows of k factors, N(0, sd²), and their Gram
// matrix.
func alsFixture(seed uint64, k, n int, sd float64) (y, g []float64) {
	y = make([]float64, n*k)
	gaussian(rand.New(rand.NewPCG(seed, 1)), y, sd)
	return y, gram(y, k)
}

// gather and mul are A x and b of alsWeights' normal equations, built
// densely by hand: A = gram·G + pos·Σ yᵢyᵢᵀ + λᵣI, b = rhs·Σ yᵢ, for WRMF's
// and iALS's weights and on a row without positives; and the gather is
// replaced, not added to, by the next row's.
func TestALSSolver_mulIsTheNormalEquations(t *testing.T) {
	const k, n = 6, 40
	y, g := alsFixture(3, k, n, 1)
	x := slices.Clone(y[:k])
	for _, w := range []alsWeights{
		{gram: 1, pos: 4, rhs: 5, lambda: 0.3},                       // WRMF, α = 4
		{gram: 0.2, pos: 1, rhs: 1, lambda: 0.01, nu: 1, unobs: 0.2}, // iALS
	} {
		s := newALSSolver(w, k, n)
		for _, rows := range [][]uint32{{1, 4, 9, 17, 33, 39, 2, 3, 5}, {}, {7, 8}} {
			lambda := w.rowLambda(len(rows), n)
			a := make([]float64, k*k)
			b := make([]float64, k)
			for p := range k {
				for q := range k {
					a[p*k+q] = w.gram * g[p*k+q]
				}
				a[p*k+p] += lambda
			}
			for _, i := range rows {
				yi := y[int(i)*k : int(i+1)*k]
				for p := range k {
					b[p] += w.rhs * yi[p]
					for q := range k {
						a[p*k+q] += w.pos * yi[p] * yi[q]
					}
				}
			}
			want := make([]float64, k)
			for p := range k {
				for q := range k {
					want[p] += a[p*k+q] * x[q]
				}
			}
			s.gather(rows, y)
			got := make([]float64, k)
			s.mul(g, x, got)
			for p := range k {
				if math.Abs(got[p]-want[p]) > 1e-12*max(1, math.Abs(want[p])) || math.Abs(s.b[p]-b[p]) > 1e-12*max(1, math.Abs(b[p])) {
					t.Fatalf("weights %+v, rows %v: Ax %v, b %v; by hand %v, %v", w, rows, got, s.b, want, b)
				}
			}
			if s.lambda != lambda {
				t.Fatalf("weights %+v, rows %v: λ %g, want %g", w, rows, s.lambda, lambda)
			}
		}
	}
}
