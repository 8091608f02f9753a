package rank

import (
	"errors"
	"math"

	"gonum.org/v1/gonum/mat"
)

// ProjectPSD returns the orthogonal projection of the symmetric matrix a onto
// S⁺d: its negative eigenvalues are set to 0 (dissertation §2.3.3).
func ProjectPSD(a mat.Symmetric) (*mat.SymDense, error) {
	var eig mat.EigenSym
	if !eig.Factorize(a, true) {
		return nil, errors.New("rank: eigen-decomposition failed")
	}
	vals := eig.Values(nil)
	var vecs mat.Dense
	eig.VectorsTo(&vecs)
	d := len(vals)
	out := mat.NewSymDense(d, nil)
	for k, v := range vals {
		if v <= 0 {
			continue
		}
		col := mat.Col(nil, k, &vecs)
		out.SymRankOne(out, v, mat.NewVecDense(d, col))
	}
	return out, nil
}

// Factor returns L (d×r) with W = L Lᵀ from the eigen-decomposition of the
// PSD matrix w, keeping eigenvalues above tol·λmax (tol ≤ 0 means 1e-10).
// The zero matrix gives a single zero column so that L is never empty.
func Factor(w mat.Symmetric, tol float64) (*mat.Dense, error) {
	if tol <= 0 {
		tol = 1e-10
	}
	var eig mat.EigenSym
	if !eig.Factorize(w, true) {
		return nil, errors.New("rank: eigen-decomposition failed")
	}
	vals := eig.Values(nil) // ascending
	var vecs mat.Dense
	eig.VectorsTo(&vecs)
	d := len(vals)
	top := vals[d-1]
	var keep []int
	for k := d - 1; k >= 0; k-- {
		if top > 0 && vals[k] > tol*top {
			keep = append(keep, k)
		}
	}
	if len(keep) == 0 {
		return mat.NewDense(d, 1, nil), nil
	}
	l := mat.NewDense(d, len(keep), nil)
	for j, k := range keep {
		s := math.Sqrt(vals[k])
		for i := 0; i < d; i++ {
			l.Set(i, j, s*vecs.At(i, k))
		}
	}
	return l, nil
}
