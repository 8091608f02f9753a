package mlr

import (
	"context"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/recsys-engine/recsys/retrieval/rank"
)

// Constraint is one 1-slack cutting plane (Δ̂, Ψ̂) of seed 002 Alg. 1:
// Ψ̂ = 1/|Q| Σ_q δψpo(q, y*_q, y_q) and Δ̂ = 1/|Q| Σ_q Δ(y*_q, y_q).
type Constraint struct {
	Delta float64
	Psi   *mat.SymDense
}

// Solver solves step 3 of seed 002 Alg. 1 (dissertation Alg. 2.1, Eq. 2.3)
// over the working set ws, starting from w0 (nil = 0).
type Solver interface {
	Solve(ctx context.Context, ws []Constraint, c float64, w0 *mat.SymDense) (*mat.SymDense, error)
}

// Objective is f(W) = tr(W) + λ‖W‖₂,₁ + C·max(0, max_k Δ_k − ⟨W,Ψ_k⟩), the
// working-set problem with the slack ξ eliminated (dissertation Eq. 2.3;
// λ = 0 is MLR, seed 002 Alg. 1 step 3).
func Objective(w *mat.SymDense, ws []Constraint, c, lambda float64) float64 {
	return mat.Trace(w) + lambda*Norm21(w) + c*Slack(w, ws)
}

// Slack is ξ = max(0, max_k Δ_k − ⟨W,Ψ_k⟩) (dissertation Alg. 2.1 step 4).
func Slack(w *mat.SymDense, ws []Constraint) float64 {
	xi := 0.0
	for _, k := range ws {
		xi = math.Max(xi, k.Delta-Frobenius(w, k.Psi))
	}
	return xi
}

// Norm21 is ‖W‖₂,₁ = Σ_i ‖W_i·‖₂ (dissertation §2.2.1).
func Norm21(w *mat.SymDense) float64 {
	d := w.SymmetricDim()
	s := 0.0
	for i := 0; i < d; i++ {
		s += rowNorm(w, i)
	}
	return s
}

func rowNorm(w *mat.SymDense, i int) float64 {
	s := 0.0
	for j := 0; j < w.SymmetricDim(); j++ {
		v := w.At(i, j)
		s += v * v
	}
	return math.Sqrt(s)
}

// Frobenius is ⟨A,B⟩_F.
func Frobenius(a, b *mat.SymDense) float64 {
	d := a.SymmetricDim()
	s := 0.0
	for i := 0; i < d; i++ {
		s += a.At(i, i) * b.At(i, i)
		for j := i + 1; j < d; j++ {
			s += 2 * a.At(i, j) * b.At(i, j)
		}
	}
	return s
}

// Subgradient is the projected sub-gradient solver of the original MLR
// implementation (seed 002 §3.2): W ← Π_S⁺[W − η_t g_t/‖g_t‖] with g_t a
// sub-gradient of Objective (I + λ·sym(W_i·/‖W_i·‖) − C·Ψ_k for the most
// violated constraint k, when ξ > 0) and the step η_t = R/√(t+1), where R =
// max(‖W0‖_F, max_k Δ_k/‖Ψ_k‖_F) is the scale of a solution.
//
// Stopping rule: after MaxIter steps, or once the best objective value seen
// has improved by less than Tol (relative) over the last Patience steps. The
// best iterate is returned.
type Subgradient struct {
	Lambda   float64 // ℓ2,1 weight; 0 for MLR
	MaxIter  int     // default 500
	Patience int     // default 50
	Tol      float64 // default 1e-4
}

// Solve implements Solver.
func (s Subgradient) Solve(ctx context.Context, ws []Constraint, c float64, w0 *mat.SymDense) (*mat.SymDense, error) {
	maxIter, patience, tol := s.MaxIter, s.Patience, s.Tol
	if maxIter <= 0 {
		maxIter = 500
	}
	if patience <= 0 {
		patience = 50
	}
	if tol <= 0 {
		tol = 1e-4
	}
	d := ws[0].Psi.SymmetricDim()
	w := mat.NewSymDense(d, nil)
	if w0 != nil {
		w.CopySym(w0)
	}
	scale := mat.Norm(w, 2)
	for _, k := range ws {
		if n := mat.Norm(k.Psi, 2); n > 0 {
			scale = math.Max(scale, k.Delta/n)
		}
	}
	if scale == 0 {
		return w, nil
	}
	best := mat.NewSymDense(d, nil)
	best.CopySym(w)
	bestF := Objective(w, ws, c, s.Lambda)
	lastF, lastT := bestF, 0
	g := mat.NewSymDense(d, nil)
	for t := 0; t < maxIter; t++ {
		if t%64 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		s.subgradient(g, w, ws, c)
		gn := mat.Norm(g, 2)
		if gn == 0 {
			break
		}
		g.ScaleSym(-scale/(math.Sqrt(float64(t+1))*gn), g)
		g.AddSym(w, g)
		next, err := rank.ProjectPSD(g)
		if err != nil {
			return nil, err
		}
		w = next
		if f := Objective(w, ws, c, s.Lambda); f < bestF {
			bestF = f
			best.CopySym(w)
		}
		if t-lastT >= patience {
			if lastF-bestF <= tol*math.Abs(lastF) {
				break
			}
			lastF, lastT = bestF, t
		}
	}
	return best, nil
}

// subgradient writes a sub-gradient of Objective at w into g.
func (s Subgradient) subgradient(g, w *mat.SymDense, ws []Constraint, c float64) {
	d := w.SymmetricDim()
	g.Zero()
	for i := 0; i < d; i++ {
		g.SetSym(i, i, 1)
	}
	if s.Lambda > 0 {
		norms := make([]float64, d)
		for i := range norms {
			norms[i] = rowNorm(w, i)
		}
		for i := 0; i < d; i++ {
			for j := i; j < d; j++ {
				v := 0.0
				if norms[i] > 0 {
					v += w.At(i, j) / norms[i]
				}
				if norms[j] > 0 {
					v += w.At(i, j) / norms[j]
				}
				g.SetSym(i, j, g.At(i, j)+s.Lambda*v/2)
			}
		}
	}
	worst, xi := -1, 0.0
	for k, con := range ws {
		if v := con.Delta - Frobenius(w, con.Psi); v > xi {
			worst, xi = k, v
		}
	}
	if worst >= 0 {
		AddScaled(g, -c, ws[worst].Psi)
	}
}

// AddScaled sets dst ← dst + alpha·a.
func AddScaled(dst *mat.SymDense, alpha float64, a *mat.SymDense) {
	d := dst.SymmetricDim()
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			dst.SetSym(i, j, dst.At(i, j)+alpha*a.At(i, j))
		}
	}
}
