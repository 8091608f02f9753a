package frml

import (
	"errors"
	"math"

	"gonum.org/v1/gonum/mat"
)

// errSingular reports a rank-deficient factor L (LᵀL not positive definite).
var errSingular = errors.New("frml: LᵀL is singular")

// SymmetricUpdate is dissertation Algorithm 3.3: given W = LLᵀ of rank m and
// a symmetric step Z = UVᵀ (Eq. 3.27), it returns M with MMᵀ = R_W(P_TW(Z)),
// the second-order retraction of Lemma 3.5 applied to the projection of Z on
// the tangent space of S⁺d,m (Lemma 3.4). It costs O(d·max(m,r)²) for r
// columns in U and V.
//
// L† is never formed: A₁ = L†U and A₂ = L†V come from a Cholesky solve of
// (LᵀL)A = LᵀU (§3.4.3). Following the derivation of Appendix 3.B,
// M = L + GL†ᵀ − ½P_L G L†ᵀ − ½ G W† G L†ᵀ + ⅜ P_L G W† G L†ᵀ, and with
// G = UVᵀ: G L†ᵀ = U A₂ᵀ, P_L G L†ᵀ = Â₁A₂ᵀ and G W† G L†ᵀ = U (A₂ᵀA₁) A₂ᵀ,
// so S = A₂ᵀA₁. (The printed Algorithm 3.3 writes S = A₁ᵀA₂, which is its
// transpose; the two agree only when A₂ᵀA₁ is symmetric, and the test
// against Lemma 3.5 shows A₂ᵀA₁ is the right one.)
func SymmetricUpdate(l, u, v *mat.Dense) (*mat.Dense, error) {
	st, err := symmetricUpdate(l, u, v)
	if err != nil {
		return nil, err
	}
	return st.m, nil
}

// updateState keeps the pieces of Algorithm 3.3 that retractionOK reuses:
// M = L + T·A₂ᵀ with T = U − ½Â₁ + (⅜Â₁ − ½U)S, and the Gram LᵀL.
type updateState struct {
	m, t, a2 *mat.Dense
	gram     *mat.SymDense
}

func symmetricUpdate(l, u, v *mat.Dense) (*updateState, error) {
	d, m := l.Dims()
	gram := mat.NewSymDense(m, nil)
	gram.SymOuterK(1, l.T())
	var chol mat.Cholesky
	if !chol.Factorize(gram) {
		return nil, errSingular
	}
	var ltu, ltv, a1 mat.Dense
	a2 := new(mat.Dense)
	ltu.Mul(l.T(), u)
	ltv.Mul(l.T(), v)
	if err := chol.SolveTo(&a1, &ltu); err != nil {
		return nil, err
	}
	if err := chol.SolveTo(a2, &ltv); err != nil {
		return nil, err
	}
	var s, hat1, tmp mat.Dense
	t := new(mat.Dense)
	s.Mul(a2.T(), &a1) // r×r
	hat1.Mul(l, &a1)   // d×r
	// T = U − ½Â₁ + (⅜Â₁ − ½U) S
	tmp.Scale(3.0/8, &hat1)
	tmp.Add(&tmp, scaled(-0.5, u))
	t.Mul(&tmp, &s)
	t.Add(t, u)
	t.Add(t, scaled(-0.5, &hat1))
	out := mat.NewDense(d, m, nil)
	out.Mul(t, a2.T())
	out.Add(out, l)
	return &updateState{m: out, t: t, a2: a2, gram: gram}, nil
}

func scaled(f float64, a mat.Matrix) *mat.Dense {
	var out mat.Dense
	out.Scale(f, a)
	return &out
}

// retractionOK reports whether MMᵀ − LLᵀ stays within twice ‖Z‖_F, the
// size of the step it retracts. The second-order retraction of Lemma 3.5 is
// W + ξ + O(‖ξ‖²·‖W†‖): once an eigenvalue of W falls far below the step
// (the iterate nears the boundary of S⁺d,m, where a lower rank would do) the
// quadratic terms explode and the check fails.
//
// With E = T·A₂ᵀ, MMᵀ − LLᵀ = LEᵀ + ELᵀ + EEᵀ = B K Bᵀ for B = [L·A₂, T] and
// K = [[0, I], [I, A₂ᵀA₂]], so ‖MMᵀ − LLᵀ‖²_F = tr((K·BᵀB)²) costs
// O(d·m·r) from the Gram LᵀL already at hand.
func retractionOK(l *mat.Dense, st *updateState, zNorm float64) bool {
	_, r := st.t.Dims()
	var lt, p, q, rr, s2, tmp mat.Dense
	lt.Mul(l.T(), st.t)     // m×r
	tmp.Mul(st.gram, st.a2) // m×r
	p.Mul(st.a2.T(), &tmp)  // (LA₂)ᵀ(LA₂) = A₂ᵀ(LᵀL)A₂
	q.Mul(st.a2.T(), &lt)   // (LA₂)ᵀT
	rr.Mul(st.t.T(), st.t)  // TᵀT
	s2.Mul(st.a2.T(), st.a2)
	n := mat.NewDense(2*r, 2*r, nil)
	n.Slice(0, r, 0, r).(*mat.Dense).Copy(&p)
	n.Slice(0, r, r, 2*r).(*mat.Dense).Copy(&q)
	n.Slice(r, 2*r, 0, r).(*mat.Dense).Copy(q.T())
	n.Slice(r, 2*r, r, 2*r).(*mat.Dense).Copy(&rr)
	k := mat.NewDense(2*r, 2*r, nil)
	for i := 0; i < r; i++ {
		k.Set(i, r+i, 1)
		k.Set(r+i, i, 1)
	}
	k.Slice(r, 2*r, r, 2*r).(*mat.Dense).Copy(&s2)
	var kn, knkn mat.Dense
	kn.Mul(k, n)
	knkn.Mul(&kn, &kn)
	change := mat.Trace(&knkn)
	return change <= 4*zNorm*zNorm*(1+1e-9)+1e-24
}

// projectRank returns L' with L'L'ᵀ the orthogonal projection of
// LLᵀ + V·diag(c)·Vᵀ onto S⁺d,m (keeping at most m positive eigenvalues,
// each at least floor·λmax so that L' keeps full column rank): the
// projected-gradient step of §3.4, computed in O(d·(m+r)²) from the
// low-rank form rather than by a d×d eigen-decomposition.
func projectRank(l, v *mat.Dense, c []float64, floor float64) (*mat.Dense, error) {
	d, m := l.Dims()
	_, r := v.Dims()
	p := m + r
	b := mat.NewDense(d, p, nil)
	b.Slice(0, d, 0, m).(*mat.Dense).Copy(l)
	b.Slice(0, d, m, p).(*mat.Dense).Copy(v)
	k := make([]float64, p)
	for i := 0; i < m; i++ {
		k[i] = 1
	}
	copy(k[m:], c)
	// Orthonormal basis Q = B E Σ^{-1/2} of span(B) from its Gram.
	g := mat.NewSymDense(p, nil)
	g.SymOuterK(1, b.T())
	var eg mat.EigenSym
	if !eg.Factorize(g, true) {
		return nil, errSingular
	}
	sig := eg.Values(nil)
	var e mat.Dense
	eg.VectorsTo(&e)
	var keep []int
	for i, s := range sig {
		if s > 1e-12*sig[p-1] {
			keep = append(keep, i)
		}
	}
	q := len(keep)
	es := mat.NewDense(p, q, nil) // E Σ^{-1/2}
	for j, i := range keep {
		s := 1 / math.Sqrt(sig[i])
		for a := 0; a < p; a++ {
			es.Set(a, j, e.At(a, i)*s)
		}
	}
	var basis mat.Dense
	basis.Mul(b, es) // d×q, orthonormal columns
	// T = Qᵀ (B K Bᵀ) Q = (BᵀQ)ᵀ K (BᵀQ).
	var btq mat.Dense
	btq.Mul(b.T(), &basis) // p×q
	t := mat.NewSymDense(q, nil)
	for i := 0; i < q; i++ {
		for j := i; j < q; j++ {
			s := 0.0
			for a := 0; a < p; a++ {
				s += btq.At(a, i) * k[a] * btq.At(a, j)
			}
			t.SetSym(i, j, s)
		}
	}
	var et mat.EigenSym
	if !et.Factorize(t, true) {
		return nil, errSingular
	}
	lam := et.Values(nil) // ascending
	var f mat.Dense
	et.VectorsTo(&f)
	top := math.Max(lam[q-1], 0)
	if top == 0 {
		return nil, errSingular
	}
	out := mat.NewDense(d, m, nil)
	for j := 0; j < m && j < q; j++ {
		i := q - 1 - j
		s := math.Sqrt(math.Max(lam[i], floor*top))
		for a := 0; a < d; a++ {
			v := 0.0
			for bcol := 0; bcol < q; bcol++ {
				v += basis.At(a, bcol) * f.At(bcol, i)
			}
			out.Set(a, j, s*v)
		}
	}
	return out, nil
}
