package mf

import (
	"context"
	"math"
	"slices"
	"unsafe"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"

	"github.com/recsys-engine/recsys/recsys"
	"github.com/recsys-engine/recsys/recsys/internal/mem"
)

// alsWeights is one weighted least-squares problem that WRMF and iALS
// share: with the other side's factors Y fixed and G = YᵀY, row r with
// positives O⁺ᵣ solves
//
//	(gram·G + pos·Σᵢ∈O⁺ᵣ yᵢyᵢᵀ + λᵣI) x = rhs·Σᵢ∈O⁺ᵣ yᵢ,
//	λᵣ = lambda·(|O⁺ᵣ| + unobs·n)^nu,
//
// n the number of rows of Y. WRMF (Hu et al. 2008) is gram = 1, pos = α,
// rhs = 1 + α, nu = 0; iALS (Rendle et al. 2022, with
// frequency-scaled regularisation) is gram = α₀, pos = rhs = 1,
// unobs = α₀.
type alsWeights struct {
	gram, pos, rhs float64
	lambda, nu     float64
	unobs          float64
}

// rowLambda is λᵣ for a row with count positives against n other rows.
func (w alsWeights) rowLambda(count, n int) float64 {
	if w.nu == 0 {
		return w.lambda
	}
	return w.lambda * math.Pow(float64(count)+w.unobs*float64(n), w.nu)
}

// alsSolver holds one goroutine's scratch space for the normal equations
// A x = b of alsWeights over n other rows of k factors.
type alsSolver struct {
	k, n        int
	w           alsWeights
	lambda      float64   // λᵣ of the row being solved
	a           []float64 // k×k for the exact solve
	t           []float64 // the exact solve's k×|rows| gather (addOuter)
	yr, yx      []float64 // a CG solve's |rows|×k gather and Yᵣx (mul)
	b, r, p, ap []float64
}

func newALSSolver(w alsWeights, k, n int) *alsSolver {
	return &alsSolver{k: k, n: n, w: w, a: make([]float64, k*k),
		b: make([]float64, k), r: make([]float64, k), p: make([]float64, k), ap: make([]float64, k)}
}

// begin sets λᵣ for a row of count positives and clears b.
func (s *alsSolver) begin(count int) {
	s.lambda = s.w.rowLambda(count, s.n)
	clear(s.b)
}

// setup sets λᵣ and b = rhs·Σ yᵢ for the row.
func (s *alsSolver) setup(rows []uint32, y []float64) {
	k := s.k
	s.begin(len(rows))
	for q, i := range rows {
		prefetchRow(y, rows, q+alsAhead, k)
		axpy(s.w.rhs, y[int(i)*k:int(i+1)*k], s.b)
	}
}

// gather copies the factors of the row's positives into s.yr (|rows|×k,
// row-major) and sets λᵣ and b = rhs·Σ yᵢ from them: the one pass over the
// other side's rows a CG solve makes, prefetching ahead; its products
// with A then run over contiguous memory (mul).
func (s *alsSolver) gather(rows []uint32, y []float64) {
	k, m := s.k, len(rows)
	s.begin(m)
	s.yr = slices.Grow(s.yr[:0], m*k)[:m*k]
	for q, i := range rows {
		prefetchRow(y, rows, q+alsAhead, k)
		yi := y[int(i)*k : int(i+1)*k]
		copy(s.yr[q*k:(q+1)*k], yi)
		axpy(s.w.rhs, yi, s.b)
	}
	s.yx = slices.Grow(s.yx[:0], m)[:m]
}

// mul sets out = A x over the gathered row: gram·G x + λᵣx + pos·Yᵣᵀ(Yᵣx),
// the last two products in one BLAS call each.
func (s *alsSolver) mul(g, x, out []float64) {
	k, m := s.k, len(s.yx)
	blas64.Gemv(blas.NoTrans, s.w.gram, blas64.General{Rows: k, Cols: k, Stride: k, Data: g},
		blas64.Vector{N: k, Inc: 1, Data: x}, 0, blas64.Vector{N: k, Inc: 1, Data: out})
	axpy(s.lambda, x, out)
	if m == 0 {
		return
	}
	yr := blas64.General{Rows: m, Cols: k, Stride: k, Data: s.yr}
	blas64.Gemv(blas.NoTrans, 1, yr, blas64.Vector{N: k, Inc: 1, Data: x}, 0, blas64.Vector{N: m, Inc: 1, Data: s.yx})
	blas64.Gemv(blas.Trans, s.w.pos, yr, blas64.Vector{N: m, Inc: 1, Data: s.yx}, 1, blas64.Vector{N: k, Inc: 1, Data: out})
}

// alsAhead is how many positives ahead a pass over a row's positives
// prefetches the other side's factor rows: a miss takes about as long as
// a few positives' arithmetic.
const alsAhead = 4

// prefetchRow prefetches the k factors of y's row rows[q], if q is in
// range.
func prefetchRow(y []float64, rows []uint32, q, k int) {
	if q < len(rows) {
		mem.Prefetch(unsafe.Pointer(&y[int(rows[q])*k]), uintptr(8*k))
	}
}

// cg improves x by steps of conjugate gradient (Takács et al. 2011: a few
// steps warm-started from the previous solution are enough within ALS).
func (s *alsSolver) cg(g []float64, rows []uint32, y, x []float64, steps int) {
	s.gather(rows, y)
	s.mul(g, x, s.ap)
	for f := range s.r {
		s.r[f] = s.b[f] - s.ap[f]
	}
	copy(s.p, s.r)
	rs := dot(s.r, s.r)
	for range steps {
		if rs <= 1e-30 {
			return
		}
		s.mul(g, s.p, s.ap)
		step := rs / dot(s.p, s.ap)
		axpy(step, s.p, x)
		axpy(-step, s.ap, s.r)
		next := dot(s.r, s.r)
		for f := range s.p {
			s.p[f] = s.r[f] + next/rs*s.p[f]
		}
		rs = next
	}
}

// exact sets x to the solution by a Cholesky factorisation of A.
func (s *alsSolver) exact(g []float64, rows []uint32, y, x []float64) {
	k := s.k
	s.setup(rows, y)
	copy(s.a, g)
	if s.w.gram != 1 {
		for f := range s.a {
			s.a[f] *= s.w.gram
		}
	}
	for f := range k {
		s.a[f*k+f] += s.lambda
	}
	s.addOuter(rows, y)
	sym := blas64.Symmetric{N: k, Stride: k, Uplo: blas.Upper, Data: s.a}
	copy(x, s.b)
	t, ok := lapack64.Potrf(sym)
	if !ok {
		// A is positive definite for λᵣ > 0; rounding aside, fall back.
		clear(x)
		s.cg(g, rows, y, x, 2*k)
		return
	}
	lapack64.Potrs(t, blas64.General{Rows: k, Cols: 1, Stride: 1, Data: x})
}

// addOuter adds pos·Σ_{i ∈ rows} yᵢyᵢᵀ to the upper triangle of s.a: the
// rows' factors gathered as the columns of a k×|rows| matrix, then one dot
// product of two of its rows per entry. A rank-one update per positive
// (BLAS syr) made k short calls per positive, each reading and writing a
// row of s.a; the dots only read, in long runs (BenchmarkALSLarge).
func (s *alsSolver) addOuter(rows []uint32, y []float64) {
	k, m := s.k, len(rows)
	if m == 0 {
		return
	}
	s.t = slices.Grow(s.t[:0], k*m)[:k*m]
	for q, i := range rows {
		for f, v := range y[int(i)*k : int(i+1)*k] {
			s.t[f*m+q] = v
		}
	}
	for a := range k {
		ta := s.t[a*m : (a+1)*m]
		for b := a; b < k; b++ {
			s.a[a*k+b] += s.w.pos * dot(ta, s.t[b*m:(b+1)*m])
		}
	}
}

// alsTrainer alternates the sweeps of a WRMF or iALS fit.
type alsTrainer struct {
	w       alsWeights
	cgSteps int // CG steps per solve; 0 solves exactly
	f       *factors
	x       *recsys.Matrix
}

// sweep solves every row of one side given the other side's factors.
func (t *alsTrainer) sweep(ctx context.Context, users, exact bool) error {
	k := t.f.k
	n, rowsOf, mine, other, nOther := t.f.nUsers, t.x.Row, t.f.user, t.f.item, t.f.nItems
	if !users {
		n, rowsOf, mine, other, nOther = t.f.nItems, t.x.Col, t.f.item, t.f.user, t.f.nUsers
	}
	g := gram(other, k)
	return recsys.ParallelFor(ctx, n, 32, "", nil, func() func(lo, hi int) {
		s := newALSSolver(t.w, k, nOther)
		return func(lo, hi int) {
			for r := lo; r < hi; r++ {
				x := mine[r*k : (r+1)*k]
				if exact || t.cgSteps == 0 {
					s.exact(g, rowsOf(r), other, x)
				} else {
					s.cg(g, rowsOf(r), other, x, t.cgSteps)
				}
			}
		}
	})
}

// epoch is one alternation: users, then items.
func (t *alsTrainer) epoch(ctx context.Context) error {
	if err := t.sweep(ctx, true, false); err != nil {
		return err
	}
	return t.sweep(ctx, false, false)
}

// fit runs epochs alternations, reporting progress under stage, then
// solves the users exactly, so that the stored user factors are what
// FoldIn computes for the final item factors.
func (t *alsTrainer) fit(ctx context.Context, epochs int, stage string, progress recsys.ProgressFunc) error {
	for e := range epochs {
		if err := t.epoch(ctx); err != nil {
			return err
		}
		if progress != nil {
			progress(stage, e+1, epochs)
		}
	}
	return t.sweep(ctx, true, true)
}

// alsFoldIn is the exact solution for a user with the given sorted history
// given f's item factors and their Gram matrix g (items past them are
// ignored; an empty history gives zeros).
func alsFoldIn(w alsWeights, f *factors, g []float64, history []uint32) []float64 {
	history = f.clip(history)
	u := make([]float64, f.k)
	if len(history) == 0 {
		return u
	}
	newALSSolver(w, f.k, f.nItems).exact(g, history, f.item, u)
	return u
}
