package mf

import (
	"fmt"
	"math"
)

// Loss is the surrogate L of the AUC indicator in seed 003 Eq. 3 (§2.1),
// applied to the score difference γ = u·v_p − u·v_q of a relevant item p
// and an irrelevant one q.
type Loss int

// The losses of seed 003 §2.1 (β > 0 is the sharpness of the last two).
// Extra["loss"] holds their numbers.
const (
	SquareHinge Loss = iota // ½ max(0, 1−γ)²
	Square                  // ½ (1−γ)²
	Sigmoid                 // −1/(1+e^{−βγ})
	Logistic                // ln(1+e^{−βγ})
)

func (l Loss) String() string {
	switch l {
	case SquareHinge:
		return "square-hinge"
	case Square:
		return "square"
	case Sigmoid:
		return "sigmoid"
	case Logistic:
		return "logistic"
	}
	return fmt.Sprintf("Loss(%d)", int(l))
}

// objective is the per-user part of Eq. 3: a loss, its sharpness β and the
// rank weighting φ (the identity when rho is 0, else tanh(ρx), §2.1).
type objective struct {
	loss      Loss
	beta, rho float64
}

// eval returns L(γ) and L′(γ). The sigmoid's derivative is −βσ(βγ)σ(−βγ);
// seed 003 Eq. 9 writes its h as 1/(1+e^{−βx})², which omits the e^{−βx}
// factor; the gradient checks test the derivative used here.
func (o *objective) eval(g float64) (float64, float64) {
	switch o.loss {
	case SquareHinge:
		if g >= 1 {
			return 0, 0
		}
		return 0.5 * (1 - g) * (1 - g), g - 1
	case Square:
		return 0.5 * (1 - g) * (1 - g), g - 1
	case Sigmoid:
		s := sigmoid(o.beta * g)
		return -s, -o.beta * s * (1 - s)
	default: // Logistic: one exp serves both.
		z := o.beta * g
		if z >= 0 {
			e := math.Exp(-z)
			return math.Log1p(e), -o.beta * e / (1 + e)
		}
		e := math.Exp(z)
		return math.Log1p(e) - z, -o.beta / (1 + e)
	}
}

// deriv returns L′(γ) alone.
func (o *objective) deriv(g float64) float64 {
	switch o.loss {
	case SquareHinge:
		return min(g-1, 0)
	case Square:
		return g - 1
	case Sigmoid:
		s := sigmoid(o.beta * g)
		return -o.beta * s * (1 - s)
	default:
		return -o.beta * sigmoid(-o.beta*g)
	}
}

// phi returns φ(s) and φ′(s).
func (o *objective) phi(s float64) (float64, float64) {
	if o.rho == 0 {
		return s, 1
	}
	t := math.Tanh(o.rho * s)
	return t, o.rho * (1 - t*t)
}

// pairTerm evaluates one user's term of Eq. 3,
//
//	θ̂ = Σ_p a_p φ(S_p),  S_p = Σ_q b_q L(s_p − s_q),
//
// from the scores s_p = u·v_p of relevant items (weights a, the sampled
// g) and s_q of irrelevant ones (weights b, the sampled g′). It writes
// c_p = ∂θ̂/∂s_p and d_q = ∂θ̂/∂s_q, so that ∂θ̂/∂u = Σ c_p v_p + Σ d_q v_q,
// ∂θ̂/∂v_p = c_p u and ∂θ̂/∂v_q = d_q u (Eqs. 4, 5, 8, 9 and the tanh case).
// lp holds one L′ per pair as scratch (len ≥ |s_p|·|s_q|). When φ is the
// identity and value is false, the losses themselves are not computed and
// θ̂ is returned as 0.
func (o *objective) pairTerm(sp, a, sq, b, c, d, lp []float64, value bool) float64 {
	clear(d)
	theta := 0.0
	nq := len(sq)
	lossNeeded := value || o.rho != 0
	for p, s := range sp {
		S := 0.0
		row := lp[p*nq : (p+1)*nq]
		for q, t := range sq {
			if lossNeeded {
				l, dl := o.eval(s - t)
				S += b[q] * l
				row[q] = dl
			} else {
				row[q] = o.deriv(s - t)
			}
		}
		f, df := o.phi(S)
		theta += a[p] * f
		w := a[p] * df
		cp := 0.0
		for q := range sq {
			cp += b[q] * row[q]
			d[q] -= w * b[q] * row[q]
		}
		c[p] = w * cp
	}
	return theta
}
