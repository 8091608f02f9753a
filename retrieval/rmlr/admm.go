// Package rmlr implements Robust Metric Learning to Rank (dissertation ch. 2):
// MLR with an ℓ2,1 row-sparsity penalty that suppresses noisy input features
// (Eq. 2.2), trained by the 1-slack cutting plane of Algorithm 2.1 (package
// mlr) with the working-set problem solved by ADMM (§2.3, Algorithm 2.2).
//
// Works cited in the comments are listed in docs/references.md; a bare
// section, equation or algorithm number refers to the dissertation.
package rmlr

import (
	"context"
	"errors"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/recsys-engine/recsys/retrieval/mlr"
	"github.com/recsys-engine/recsys/retrieval/rank"
)

// ADMM solves Eq. 2.3, min_{W⪰0} tr(W) + λ‖W‖₂,₁ + C·max_k[Δ_k − ⟨W,Ψ_k⟩]₊,
// by the scaled-form ADMM of dissertation §2.3 over the split W = V = Z:
//
//   - W-update (Eq. 2.4) through its dual, Eq. 2.7: a QP in |A| variables
//     (α ≥ 0, Σα ≤ C) solved exactly by pairwise (SMO) steps, then Eq. 2.9;
//   - V-update (Eq. 2.5): the ℓ2,1 prox restricted to symmetric matrices,
//     by an inner ADMM alternating the row-wise shrinkage of Eq. 2.10, the
//     projection onto S^d and a dual update (§2.3.2);
//   - Z-update: Π_S⁺ of the average (§2.3.3);
//
// with ρ adapted by residual balancing (Boyd et al. 2011 §3.4.1) every 10
// iterations during the first 200 only (a ρ that keeps changing stalls it). It stops
// when the primal residual ‖(W−Z, V−Z)‖ and the dual residual ρ√2‖Z−Z⁻‖
// both fall under Tol relative to ‖Z‖ and ρ‖(U_W,U_V)‖, or after MaxIter
// iterations (the early stopping of dissertation §2.3.3). It returns Z,
// which is PSD.
//
// An ADMM value keeps its iterates between calls so that successive
// cutting-plane rounds warm-start; it is not safe for concurrent use.
type ADMM struct {
	Lambda    float64 // λ, the ℓ2,1 weight (0 gives MLR-ADMM)
	Rho       float64 // initial ρ (default 1)
	MaxIter   int     // T (default 100)
	Tol       float64 // relative residual tolerance (default 1e-4)
	InnerIter int     // V-update inner iterations (default 30)

	z, uw, uv *mat.SymDense
	pDense, y *mat.Dense
	alpha     []float64
	rho       float64
}

// Solve implements mlr.Solver.
func (a *ADMM) Solve(ctx context.Context, ws []mlr.Constraint, c float64, w0 *mat.SymDense) (*mat.SymDense, error) {
	if len(ws) == 0 {
		return nil, errors.New("rmlr: empty working set")
	}
	maxIter, tol, inner := a.MaxIter, a.Tol, a.InnerIter
	if maxIter <= 0 {
		maxIter = 100
	}
	if tol <= 0 {
		tol = 1e-4
	}
	if inner <= 0 {
		inner = 30
	}
	d := ws[0].Psi.SymmetricDim()
	if a.z == nil || a.z.SymmetricDim() != d {
		a.z, a.uw, a.uv = mat.NewSymDense(d, nil), mat.NewSymDense(d, nil), mat.NewSymDense(d, nil)
		a.pDense = mat.NewDense(d, d, nil)
		a.y = mat.NewDense(d, d, nil)
		a.rho = a.Rho
		if a.rho <= 0 {
			a.rho = 1
		}
		if w0 != nil {
			a.z.CopySym(w0)
		}
		a.alpha = nil
	}
	m := len(ws)
	for len(a.alpha) < m {
		a.alpha = append(a.alpha, 0)
	}
	h := make([]float64, m*m)
	for i := 0; i < m; i++ {
		for j := i; j < m; j++ {
			v := mlr.Frobenius(ws[i].Psi, ws[j].Psi)
			h[i*m+j], h[j*m+i] = v, v
		}
	}
	trPsi := make([]float64, m)
	for i, k := range ws {
		trPsi[i] = mat.Trace(k.Psi)
	}
	w := mat.NewSymDense(d, nil)
	v := mat.NewSymDense(d, nil)
	r := mat.NewSymDense(d, nil)
	zPrev := mat.NewSymDense(d, nil)
	avg := mat.NewSymDense(d, nil)
	b := make([]float64, m)
	for t := 0; t < maxIter; t++ {
		if t%16 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		rho := a.rho
		// W-update: R = Z − U_W; b_i = ⟨ρR − I, Ψ_i⟩ − ρΔ_i (Eq. 2.8).
		r.CopySym(a.z)
		mlr.AddScaled(r, -1, a.uw)
		for i, k := range ws {
			b[i] = rho*mlr.Frobenius(r, k.Psi) - trPsi[i] - rho*k.Delta
		}
		solveDualQP(h, b, c, a.alpha)
		// W = R + (Σ α_i Ψ_i − I)/ρ (Eq. 2.9).
		w.CopySym(r)
		for i, k := range ws {
			if a.alpha[i] != 0 {
				mlr.AddScaled(w, a.alpha[i]/rho, k.Psi)
			}
		}
		for i := 0; i < d; i++ {
			w.SetSym(i, i, w.At(i, i)-1/rho)
		}
		// V-update on A = Z − U_V (Eq. 2.5).
		r.CopySym(a.z)
		mlr.AddScaled(r, -1, a.uv)
		a.proxSym21(v, r, a.Lambda/rho, inner)
		// Z-update: Π_S⁺[½(W + V + U_W + U_V)].
		avg.CopySym(w)
		mlr.AddScaled(avg, 1, v)
		mlr.AddScaled(avg, 1, a.uw)
		mlr.AddScaled(avg, 1, a.uv)
		avg.ScaleSym(0.5, avg)
		zPrev.CopySym(a.z)
		z, err := rank.ProjectPSD(avg)
		if err != nil {
			return nil, err
		}
		a.z = z
		// Dual updates.
		mlr.AddScaled(a.uw, 1, w)
		mlr.AddScaled(a.uw, -1, z)
		mlr.AddScaled(a.uv, 1, v)
		mlr.AddScaled(a.uv, -1, z)
		// Residuals.
		prim := math.Hypot(distF(w, z), distF(v, z))
		dual := rho * math.Sqrt2 * distF(z, zPrev)
		zn := mat.Norm(z, 2)
		un := rho * math.Hypot(mat.Norm(a.uw, 2), mat.Norm(a.uv, 2))
		if t > 0 && prim <= tol*math.Max(zn, 1e-12) && dual <= tol*math.Max(un, 1e-12) {
			break
		}
		switch {
		case t >= adaptFor || t%10 != 9:
		case prim > 10*dual:
			a.rescale(2)
		case dual > 10*prim:
			a.rescale(0.5)
		}
	}
	out := mat.NewSymDense(d, nil)
	out.CopySym(a.z)
	return out, nil
}

// rescale multiplies ρ by f; the scaled duals U = Λ/ρ shrink by f.
func (a *ADMM) rescale(f float64) {
	a.rho *= f
	a.uw.ScaleSym(1/f, a.uw)
	a.uv.ScaleSym(1/f, a.uv)
	a.y.Scale(1/f, a.y)
}

// proxSym21 sets v = argmin_{V ∈ S^d} μ‖V‖₂,₁ + ½‖V − A‖²_F by an inner
// ADMM on the split V = P (dissertation §2.3.2): V ← Π_S[(A + P − Y)/2],
// P ← prox_{μ‖·‖₂,₁}(V + Y) (Eq. 2.10), Y ← Y + V − P. P and Y persist
// between calls as a warm start.
func (a *ADMM) proxSym21(v, A *mat.SymDense, mu float64, iters int) {
	d := A.SymmetricDim()
	if mu == 0 {
		v.CopySym(A)
		return
	}
	// Work on dense row-major copies: vv = V, aa = A (full), p = P, y = Y.
	aa := symToSlice(A)
	vv := make([]float64, d*d)
	p, y := a.pDense.RawMatrix().Data, a.y.RawMatrix().Data
	for it := 0; it < iters; it++ {
		for i := 0; i < d; i++ {
			for j := i; j < d; j++ {
				s := (p[i*d+j] + p[j*d+i] - y[i*d+j] - y[j*d+i]) / 2
				val := (aa[i*d+j] + s) / 2
				vv[i*d+j], vv[j*d+i] = val, val
			}
		}
		maxChange := 0.0
		for i := 0; i < d; i++ {
			norm := 0.0
			for j := 0; j < d; j++ {
				t := vv[i*d+j] + y[i*d+j]
				norm += t * t
			}
			norm = math.Sqrt(norm)
			shrink := 0.0
			if norm > mu {
				shrink = 1 - mu/norm
			}
			for j := 0; j < d; j++ {
				nv := shrink * (vv[i*d+j] + y[i*d+j])
				if c := math.Abs(nv - p[i*d+j]); c > maxChange {
					maxChange = c
				}
				p[i*d+j] = nv
			}
		}
		resid := 0.0
		for k := range y {
			r := vv[k] - p[k]
			if r < 0 {
				r = -r
			}
			if r > resid {
				resid = r
			}
			y[k] += vv[k] - p[k]
		}
		if maxChange < 1e-12 && resid < 1e-12 {
			break
		}
	}
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			v.SetSym(i, j, vv[i*d+j])
		}
	}
}

// symToSlice returns the full row-major entries of a.
func symToSlice(a *mat.SymDense) []float64 {
	d := a.SymmetricDim()
	out := make([]float64, d*d)
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			v := a.At(i, j)
			out[i*d+j], out[j*d+i] = v, v
		}
	}
	return out
}

// adaptFor bounds the iterations during which ρ may change, so that ADMM
// ends with a fixed ρ and converges.
const adaptFor = 200

func distF(a, b *mat.SymDense) float64 {
	d := a.SymmetricDim()
	s := 0.0
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			t := a.At(i, j) - b.At(i, j)
			s += t * t
		}
	}
	return math.Sqrt(s)
}

// solveDualQP minimises ½αᵀHα + bᵀα over {α ≥ 0, Σα ≤ C} (the negated dual
// Eq. 2.7) from the warm start alpha. A slack α₀ = C − Σα (with zero cost)
// turns the feasible set into a simplex, on which SMO-style pairwise steps
// are exact: move mass from the support coordinate with the largest gradient
// to the coordinate with the smallest, by the closed-form line search. It
// stops when that gradient gap is below 1e-10·(1 + max|g|), or after 200·m
// steps.
func solveDualQP(h, b []float64, c float64, alpha []float64) {
	m := len(b)
	// Coordinates 0..m-1 are α, m is the slack.
	a := make([]float64, m+1)
	sum := 0.0
	for i, v := range alpha {
		a[i] = math.Max(v, 0)
		sum += a[i]
	}
	if sum > c {
		for i := range a[:m] {
			a[i] *= c / sum
		}
		sum = c
	}
	a[m] = c - sum
	g := make([]float64, m+1)
	for i := 0; i < m; i++ {
		s := b[i]
		for j, v := range h[i*m : (i+1)*m] {
			s += v * a[j]
		}
		g[i] = s
	}
	hAt := func(i, j int) float64 {
		if i == m || j == m {
			return 0
		}
		return h[i*m+j]
	}
	for it := 0; it < 200*(m+1); it++ {
		up, down := 0, -1
		scale := 0.0
		for k := 0; k <= m; k++ {
			scale = math.Max(scale, math.Abs(g[k]))
			if g[k] < g[up] {
				up = k
			}
			if a[k] > 0 && (down < 0 || g[k] > g[down]) {
				down = k
			}
		}
		if down < 0 || g[down]-g[up] <= 1e-10*(1+scale) {
			break
		}
		curv := hAt(up, up) + hAt(down, down) - 2*hAt(up, down)
		delta := a[down]
		if curv > 0 {
			delta = math.Min(delta, (g[down]-g[up])/curv)
		}
		a[up] += delta
		a[down] -= delta
		for k := 0; k < m; k++ {
			g[k] += delta * (hAt(k, up) - hAt(k, down))
		}
	}
	copy(alpha, a[:m])
}
