package frml

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func randDense(rng *rand.Rand, r, c int, scale float64) *mat.Dense {
	a := mat.NewDense(r, c, nil)
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			a.Set(i, j, scale*rng.NormFloat64())
		}
	}
	return a
}

// pinv is the Moore–Penrose pseudo-inverse by SVD (tests only).
func pinv(tb testing.TB, a mat.Matrix) *mat.Dense {
	tb.Helper()
	var svd mat.SVD
	if !svd.Factorize(a, mat.SVDThin) {
		tb.Fatal("svd failed")
	}
	var u, v mat.Dense
	svd.UTo(&u)
	svd.VTo(&v)
	vals := svd.Values(nil)
	for j, s := range vals {
		inv := 0.0
		if s > 1e-10*vals[0] {
			inv = 1 / s
		}
		for i := 0; i < v.RawMatrix().Rows; i++ {
			v.Set(i, j, v.At(i, j)*inv)
		}
	}
	var out mat.Dense
	out.Mul(&v, u.T())
	return &out
}

// retractionDirect computes R_W(ξ) = V W† Vᵀ of Lemma 3.5 with ξs, ξp of
// Lemma 3.4 for W = LLᵀ and the ambient step Z, with explicit matrices.
func retractionDirect(tb testing.TB, l, z *mat.Dense) *mat.Dense {
	tb.Helper()
	d, _ := l.Dims()
	var w, sym, py, pperp, xs, xp, tmp mat.Dense
	w.Mul(l, l.T())
	sym.Add(z, z.T())
	sym.Scale(0.5, &sym)
	py.Mul(l, pinv(tb, l)) // P_Y = Y Y†
	eye := mat.NewDiagDense(d, nil)
	for i := 0; i < d; i++ {
		eye.SetDiag(i, 1)
	}
	pperp.Sub(eye, &py)
	xs.Mul(&py, &sym)
	xs.Mul(&xs, &py)
	var a, b mat.Dense
	a.Mul(&pperp, &sym)
	a.Mul(&a, &py)
	b.Mul(&py, &sym)
	b.Mul(&b, &pperp)
	xp.Add(&a, &b)
	wp := pinv(tb, &w)
	// V = W + ½ξs + ξp − ⅛ ξs W† ξs − ½ ξp W† ξs
	v := mat.DenseCopyOf(&w)
	tmp.Scale(0.5, &xs)
	v.Add(v, &tmp)
	v.Add(v, &xp)
	var q mat.Dense
	q.Mul(&xs, wp)
	q.Mul(&q, &xs)
	q.Scale(-1.0/8, &q)
	v.Add(v, &q)
	q.Mul(&xp, wp)
	q.Mul(&q, &xs)
	q.Scale(-0.5, &q)
	v.Add(v, &q)
	var out mat.Dense
	out.Mul(v, wp)
	out.Mul(&out, v.T())
	return &out
}

func TestSymmetricUpdate_matchesLemma35(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, tc := range []struct{ d, m, r int }{{4, 2, 2}, {5, 3, 2}, {6, 3, 4}, {7, 7, 2}, {8, 2, 10}} {
		for trial := 0; trial < 5; trial++ {
			l := randDense(rng, tc.d, tc.m, 1)
			v := randDense(rng, tc.d, tc.r, 1)
			// A symmetric step Z = UVᵀ: U = V·diag(c), as Algorithm 3.4 builds it.
			u := mat.DenseCopyOf(v)
			for j := 0; j < tc.r; j++ {
				c := 0.2 * rng.NormFloat64()
				for i := 0; i < tc.d; i++ {
					u.Set(i, j, c*v.At(i, j))
				}
			}
			m, err := SymmetricUpdate(l, u, v)
			if err != nil {
				t.Fatal(err)
			}
			var got, z mat.Dense
			got.Mul(m, m.T())
			z.Mul(u, v.T())
			want := retractionDirect(t, l, &z)
			if !mat.EqualApprox(&got, want, 1e-8*math.Max(1, mat.Norm(want, 2))) {
				t.Fatalf("d=%d m=%d r=%d: MMᵀ =\n%v\nLemma 3.5 =\n%v", tc.d, tc.m, tc.r,
					mat.Formatted(&got, mat.Squeeze()), mat.Formatted(want, mat.Squeeze()))
			}
			// Symmetric PSD of rank m.
			sym := mat.NewSymDense(tc.d, nil)
			sym.SymOuterK(1, m)
			var eig mat.EigenSym
			if !eig.Factorize(sym, false) {
				t.Fatal("eigen failed")
			}
			vals := eig.Values(nil)
			top := vals[len(vals)-1]
			rankM := 0
			for _, ev := range vals {
				if ev < -1e-9*top {
					t.Fatalf("negative eigenvalue %v", ev)
				}
				if ev > 1e-9*top {
					rankM++
				}
			}
			if rankM != tc.m {
				t.Fatalf("rank %d, want %d (eigenvalues %v)", rankM, tc.m, vals)
			}
		}
	}
}

// TestSymmetricUpdate_zeroStep: R_W(0) = W (centering of the retraction).
func TestSymmetricUpdate_zeroStep(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	l := randDense(rng, 5, 3, 1)
	u := mat.NewDense(5, 2, nil)
	m, err := SymmetricUpdate(l, u, u)
	if err != nil {
		t.Fatal(err)
	}
	if !mat.EqualApprox(m, l, 1e-12) {
		t.Fatalf("M = %v, want L", mat.Formatted(m))
	}
}

// TestProjectRank_matchesEigenProjection: the low-rank projected step equals
// the best rank-m PSD approximation of LLᵀ + V diag(c) Vᵀ computed from a
// full d×d eigen-decomposition.
func TestProjectRank_matchesEigenProjection(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	d, m, r := 6, 3, 4
	l := randDense(rng, d, m, 1)
	v := randDense(rng, d, r, 1)
	c := []float64{-0.8, 0.3, -2, 0.1}
	got, err := projectRank(l, v, c, 0)
	if err != nil {
		t.Fatal(err)
	}
	full := mat.NewSymDense(d, nil)
	full.SymOuterK(1, l)
	for j, cj := range c {
		full.SymRankOne(full, cj, v.ColView(j))
	}
	var eig mat.EigenSym
	eig.Factorize(full, true)
	vals := eig.Values(nil)
	var vecs mat.Dense
	eig.VectorsTo(&vecs)
	want := mat.NewDense(d, d, nil)
	for k := d - 1; k >= d-m; k-- {
		if vals[k] <= 0 {
			continue
		}
		var outer mat.Dense
		col := vecs.ColView(k)
		outer.Outer(vals[k], col, col)
		want.Add(want, &outer)
	}
	var gw mat.Dense
	gw.Mul(got, got.T())
	if !mat.EqualApprox(&gw, want, 1e-9) {
		t.Fatalf("projected step\n%v\nwant\n%v", mat.Formatted(&gw), mat.Formatted(want))
	}
}

// TestRetractionOK_lowRankNorm: the low-rank formula for ‖MMᵀ − LLᵀ‖_F used
// by retractionOK agrees with the dense computation.
func TestRetractionOK_lowRankNorm(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 3))
	l := randDense(rng, 7, 3, 1)
	v := randDense(rng, 7, 2, 1)
	u := mat.DenseCopyOf(v)
	u.Scale(0.3, u)
	st, err := symmetricUpdate(l, u, v)
	if err != nil {
		t.Fatal(err)
	}
	var mm, ll mat.Dense
	mm.Mul(st.m, st.m.T())
	ll.Mul(l, l.T())
	mm.Sub(&mm, &ll)
	dense := mat.Norm(&mm, 2)
	// The check passes exactly when the threshold 2·zNorm is above the change.
	if !retractionOK(l, st, dense/2*1.001) || retractionOK(l, st, dense/2*0.999) {
		t.Fatalf("retractionOK disagrees with the dense norm %v", dense)
	}
}
