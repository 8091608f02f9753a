// Package mlr implements Metric Learning to Rank (McFee and Lanckriet 2010,
// seed 002 Alg. 1): a 1-slack margin-rescaling cutting-plane method for a
// structural SVM over rankings induced by Mahalanobis distance, with the
// tr(W) regulariser, a PSD constraint and separation oracles for AUC,
// Prec@k, MAP, MRR and NDCG (seed 002 §4).
//
// Works cited in the comments are listed in docs/references.md; a bare
// section, equation or algorithm number refers to seed 002.
//
// The working-set problem (Alg. 1 step 3) is solved by a pluggable Solver;
// the default is the projected sub-gradient method of the original
// implementation (seed 002 §3.2, see Subgradient). Package rmlr plugs in the
// ADMM solver of R-MLR (dissertation Alg. 2.2).
package mlr

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"

	"gonum.org/v1/gonum/mat"

	"github.com/recsys-engine/recsys/retrieval/rank"
)

// Problem is the training data (rank.Problem, shared with FRML).
type Problem = rank.Problem

// Options configures Train.
type Options struct {
	Oracle Oracle
	// C is the slack trade-off (default 1).
	C float64
	// Epsilon is the accuracy threshold ε (default 0.01, seed 002 §5).
	Epsilon float64
	// MaxIter caps the cutting-plane rounds (default 100).
	MaxIter int
	// Solver solves the working-set problem (default Subgradient{}).
	Solver Solver
	// Workers run the separation oracles in parallel (default GOMAXPROCS).
	Workers int
	// Progress, when set, is called after each round.
	Progress func(round int, delta, xi float64)
}

// Result is a trained metric.
type Result struct {
	W          *mat.SymDense
	Xi         float64 // slack on the working set
	Rounds     int     // cutting-plane rounds
	Converged  bool    // stopped by the ε rule rather than MaxIter
	Constraint int     // size of the working set
}

// Train runs seed 002 Alg. 1 (dissertation Alg. 2.1 when the solver adds
// the ℓ2,1 term): alternately solve for W on the working set and add the
// batch of most violated rankings, until that batch is violated by no more
// than ξ + ε.
func Train(ctx context.Context, p Problem, opt Options) (*Result, error) {
	if err := p.Check(); err != nil {
		return nil, fmt.Errorf("mlr: %w", err)
	}
	if err := opt.Oracle.Validate(); err != nil {
		return nil, err
	}
	c, eps, maxIter, solver := opt.C, opt.Epsilon, opt.MaxIter, opt.Solver
	if c <= 0 {
		c = 1
	}
	if eps <= 0 {
		eps = 0.01
	}
	if maxIter <= 0 {
		maxIter = 100
	}
	if solver == nil {
		solver = Subgradient{}
	}
	_, d := p.X.Dims()
	w := mat.NewSymDense(d, nil)
	var ws []Constraint
	xi := 0.0
	res := &Result{}
	for round := 1; round <= maxIter; round++ {
		con, err := Separate(ctx, p, opt.Oracle, w, opt.Workers)
		if err != nil {
			return nil, err
		}
		viol := con.Delta - Frobenius(w, con.Psi)
		if opt.Progress != nil {
			opt.Progress(round, con.Delta, xi)
		}
		res.Rounds = round
		if viol <= xi+eps {
			res.Converged = true
			break
		}
		ws = append(ws, con)
		if w, err = solver.Solve(ctx, ws, c, w); err != nil {
			return nil, err
		}
		xi = Slack(w, ws)
	}
	res.W, res.Xi, res.Constraint = w, xi, len(ws)
	return res, nil
}

// Separate computes one constraint batch (Alg. 1 steps 4–6): for every
// query the most violated ranking y_q, and Ψ̂ = 1/|Q| Σ_q δψpo(q, y*_q, y_q),
// Δ̂ = 1/|Q| Σ_q Δ(y*_q, y_q).
//
// δψpo is kept in the factored form of seed 002 §3.2: with φM(q,x) =
// −(q−x)(q−x)ᵀ and per-item weights w_x (their coefficients in ψ(y*) −
// ψ(y), which sum to 0), δψ_q = q m_qᵀ + m_q qᵀ − Σ_x w_x x xᵀ where m_q =
// Σ_x w_x x, so the batch costs O(n²·rank(W)) for distances plus O(n²·d).
func Separate(ctx context.Context, p Problem, o Oracle, w *mat.SymDense, workers int) (Constraint, error) {
	if err := p.Check(); err != nil {
		return Constraint{}, fmt.Errorf("mlr: %w", err)
	}
	n, d := p.X.Dims()
	l, err := rank.Factor(w, 0)
	if err != nil {
		return Constraint{}, err
	}
	var y mat.Dense
	y.Mul(p.X, l)
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, len(p.Queries))
	m := mat.NewDense(len(p.Queries), d, nil)
	diag := make([][]float64, workers)
	deltas := make([]float64, workers)
	var wg sync.WaitGroup
	var firstErr error
	var errOnce sync.Once
	for wk := 0; wk < workers; wk++ {
		diag[wk] = make([]float64, n)
		wg.Add(1)
		go func(wk int) {
			defer wg.Done()
			s := newScratch(n)
			for qi := wk; qi < len(p.Queries); qi += workers {
				if qi%64 == wk && ctx.Err() != nil {
					errOnce.Do(func() { firstErr = ctx.Err() })
					return
				}
				deltas[wk] += s.query(p, o, &y, p.Queries[qi], diag[wk], m.RawRowView(qi))
			}
		}(wk)
	}
	wg.Wait()
	if firstErr != nil {
		return Constraint{}, firstErr
	}
	dsum := make([]float64, n)
	delta := 0.0
	for wk := range diag {
		for x, v := range diag[wk] {
			dsum[x] += v
		}
		delta += deltas[wk]
	}
	// A = Σ_q q m_qᵀ = X_Qᵀ M.
	xq := mat.NewDense(len(p.Queries), d, nil)
	for qi, q := range p.Queries {
		xq.SetRow(qi, p.X.RawRowView(q))
	}
	var a mat.Dense
	a.Mul(xq.T(), m)
	// B = Xᵀ diag(D) X.
	xs := mat.DenseCopyOf(p.X)
	for x := 0; x < n; x++ {
		row := xs.RawRowView(x)
		for j := range row {
			row[j] *= dsum[x]
		}
	}
	var b mat.Dense
	b.Mul(p.X.T(), xs)
	inv := 1 / float64(len(p.Queries))
	psi := mat.NewSymDense(d, nil)
	for i := 0; i < d; i++ {
		for j := i; j < d; j++ {
			psi.SetSym(i, j, inv*(a.At(i, j)+a.At(j, i)-(b.At(i, j)+b.At(j, i))/2))
		}
	}
	return Constraint{Delta: delta * inv, Psi: psi}, nil
}

type scored struct {
	s float64
	x int32
}

type scratch struct {
	pos, neg     []scored
	posS, negS   []float64
	weightByItem []float64
}

func newScratch(n int) *scratch {
	return &scratch{weightByItem: make([]float64, n)}
}

// query runs the oracle for q, adds the item weights w_x to diag and writes
// m_q into mrow; it returns Δ(y*_q, y_q).
func (s *scratch) query(p Problem, o Oracle, y *mat.Dense, q int, diag, mrow []float64) float64 {
	n, r := y.Dims()
	yq := y.RawRowView(q)
	s.pos, s.neg = s.pos[:0], s.neg[:0]
	for x := 0; x < n; x++ {
		if x == q {
			continue
		}
		yx := y.RawRowView(x)
		dist := 0.0
		for k := 0; k < r; k++ {
			t := yq[k] - yx[k]
			dist += t * t
		}
		if p.Sup.IsRelevant(q, x) {
			s.pos = append(s.pos, scored{-dist, int32(x)})
		} else {
			s.neg = append(s.neg, scored{-dist, int32(x)})
		}
	}
	nP, nN := len(s.pos), len(s.neg)
	if nP == 0 || nN == 0 {
		return 0
	}
	byScore := func(a, b scored) int {
		switch {
		case a.s > b.s:
			return -1
		case a.s < b.s:
			return 1
		}
		return int(a.x - b.x)
	}
	slices.SortFunc(s.pos, byScore)
	slices.SortFunc(s.neg, byScore)
	s.posS, s.negS = s.posS[:0], s.negS[:0]
	for _, v := range s.pos {
		s.posS = append(s.posS, v.s)
	}
	for _, v := range s.neg {
		s.negS = append(s.negS, v.s)
	}
	rr, delta := o.Separate(s.posS, s.negS)
	inv := 1 / (float64(nP) * float64(nN))
	// Weights of ψ(y*) − ψ(y): relevant a: 2·r_a; irrelevant b: −2·#{a: r_a > b}.
	for a, v := range s.pos {
		s.weightByItem[v.x] = 2 * float64(rr[a]) * inv
	}
	below := 0 // #{a : r_a ≤ b}
	for b, v := range s.neg {
		for below < nP && rr[below] <= b {
			below++
		}
		s.weightByItem[v.x] = -2 * float64(nP-below) * inv
	}
	for j := range mrow {
		mrow[j] = 0
	}
	for x := 0; x < n; x++ {
		wx := s.weightByItem[x]
		if x == q || wx == 0 {
			continue
		}
		diag[x] += wx
		row := p.X.RawRowView(x)
		for j, v := range row {
			mrow[j] += wx * v
		}
	}
	for _, v := range s.pos {
		s.weightByItem[v.x] = 0
	}
	for _, v := range s.neg {
		s.weightByItem[v.x] = 0
	}
	return delta
}
