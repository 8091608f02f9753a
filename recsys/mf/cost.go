package mf

import (
	"github.com/recsys-engine/recsys/recsys"
)

// The point costs of the factorisations (recsys.Kind.PointCost), in the
// terms of recsys/pointcost.go: U users, I items, P positives, d factors,
// V validation users. Every model scores a validation user with a dot
// product per item, I·d. The constants are the operations of one counted
// step, measured as recsys's.

// shapeOf returns U, I and P of s as floats.
func shapeOf(s recsys.Shape) (u, i, p float64) {
	return float64(s.Users), float64(s.Items), float64(s.Positives)
}

// pointFactors is the number of factors of p (DefaultFactors for 0).
func pointFactors(p recsys.Params) float64 {
	if p.K <= 0 {
		return DefaultFactors
	}
	return float64(p.K)
}

// extraInt is p.Extra[key] as an int, def when missing.
func extraInt(p recsys.Params, key string, def int) float64 {
	if v, ok := p.Extra[key]; ok && v >= 0 {
		return float64(int(v))
	}
	return float64(def)
}

// factorValidation is a validation pass of a factorisation: a dot
// product of d for every item, valDot an operation (they run in long
// contiguous loops).
func factorValidation(s recsys.Shape, d float64) float64 {
	return recsys.ValidationOps(s, valDot*float64(s.Items)*d)
}

const valDot = 0.25

// alsOps counts a WRMF or iALS fit (als.go) of d factors, e epochs and
// cg CG steps per row. An epoch sweeps both sides; a side's sweep forms
// the other side's Gram matrix, n·d², and solves every row: cg+1 products
// with A, each d² for the Gram term and 2·m·d for a row of m positives,
// after one gather of m·d. Summed over both sides, an epoch is
// (cg+2)·(U+I)·d² + 2·(2·cg+3)·P·d. With cg = 0 every solve is exact: a
// Cholesky factorisation, d³/3, and the outer products, m·d²/2. The fit
// ends with an exact user sweep: U·d³/3 + P·d²/2 + (U+I)·d².
func alsOps(s recsys.Shape, d, e, cg float64) float64 {
	u, i, p := shapeOf(s)
	exact := u*d*d*d/3 + p*d*d/2 + (u+i)*d*d
	var epoch float64
	if cg > 0 {
		epoch = (cg+2)*(u+i)*d*d + 2*(2*cg+3)*p*d
	} else {
		epoch = (u+i)*d*d*d/3 + p*d*d + (u+i)*d*d
	}
	return e*epoch + exact
}

// alsPoint is the point cost of WRMF (epochs default) or iALS: the fit
// (alsOps, alsFlop each: BLAS runs near the machine's rate) and a
// validation pass.
func alsPoint(epochs int) func(s recsys.Shape, p recsys.Params) float64 {
	return func(s recsys.Shape, p recsys.Params) float64 {
		d := pointFactors(p)
		ops := alsOps(s, d, extraInt(p, "epochs", epochs), extraInt(p, "cg", 3))
		return recsys.OpSeconds * (alsFlop*ops + factorValidation(s, d))
	}
}

const alsFlop = 0.2

// bprPoint is BPR's: epochs of P SGD steps, each reading and updating
// three factor rows and drawing a negative, (d + bprDraw) operations a
// step. A fit runs on one core and fitConcurrently runs the grid's fits
// one on each, so a point's share of a batch's wall time on 2 cores is
// its count at OpSeconds.
func bprPoint(s recsys.Shape, p recsys.Params) float64 {
	d := pointFactors(p)
	_, _, pos := shapeOf(s)
	return recsys.OpSeconds * (bprSGD*extraInt(p, "epochs", bprEpochs)*pos*(d+bprDraw) + factorValidation(s, d))
}

const bprSGD, bprDraw = 3, 20

// mfaucPoint is MFAUC's: epochs iterations of max(U, I) row-and-column
// steps, each drawing its samples and weights (mfaucDraw operations) and
// taking gradients over κ_Y relevant and κ_Y irrelevant items of a user
// and κ_W users of an item, (2κ_Y + κ_W)·d (mfaucSGD each); the tanh
// weighting (ρ > 0) costs about twice as much (mfgrid.go of recsys/eval).
func mfaucPoint(s recsys.Shape, p recsys.Params) float64 {
	d := pointFactors(p)
	u, i, _ := shapeOf(s)
	step := mfaucDraw + mfaucSGD*(2*extraInt(p, "kappa_y", 10)+extraInt(p, "kappa_w", 16))*d
	if p.Extra["rho"] > 0 {
		step *= 2
	}
	return recsys.OpSeconds * (extraInt(p, "epochs", mfaucEpochs)*max(u, i)*step + factorValidation(s, d))
}

const mfaucDraw, mfaucSGD = 9000, 2
