package recsys

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"sync/atomic"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"

	"github.com/recsys-engine/recsys/recsys/blob"
)

// EASE is the shallow autoencoder of Steck (2019), "Embarrassingly Shallow
// Autoencoders for Sparse Data": item-item weights B minimising
//
//	‖X − XB‖²_F + λ‖B‖²_F  subject to diag(B) = 0,
//
// whose closed form is B = I − P·diag(1/diag P) with P = (XᵀX + λI)⁻¹
// (Steck 2019, Eq. 8), i.e. B_ij = −P_ij/P_jj off the diagonal. A user's scores
// are x_u B: score(u, j) = Σ_{i ∈ O⁺u} B_ij, computed from the live history
// like the neighbourhood models.
//
// The constraint decouples by column: column j of B is the ridge
// regression of x_j on the other items, b = (G_SS + λI)⁻¹ G_Sj with
// G = XᵀX and S = I \ {j}. Two variants follow:
//
//   - dense: the closed form over the m items that have a training
//     positive (the others have B = 0), when m ≤ the dense limit
//     (Params.Extra "max_dense", RECSYS_EASE_MAX_DENSE_ITEMS, default
//     DefaultEASEMaxDense). The Gram matrix is factorised and inverted in
//     place in one m×m float64 buffer (Cholesky, LAPACK potrf/potri), and B is
//     kept as m×m float32: 12·m² bytes at the peak of a fit, 4·m² served.
//   - sparse, above the limit: the same ridge regression per column j with
//     S = KNN(j), the k_max items most similar to j by cosine (Params.K,
//     RECSYS_EASE_NEIGHBOURS, default DefaultEASENeighbours), so memory is
//     O(n·k_max) and time O(n·k_max³) per λ, the Gram counts O(n·k_max²)
//     once for a whole λ grid (easeFitGrid). Items sharing no user with j are never
//     in KNN(j); when every other item is (k_max ≥ n−1 and every pair
//     co-occurs) it is the dense solution.
//
// Weights may be negative (an item that predicts against j).
type EASE struct {
	lambda float64
	k      int // the sparse variant's k_max; 0 for the dense one
	nItems int
	// dense: active lists the items with a training positive, ascending,
	// and b is B over them, row = the consumed item i, column = the
	// scored item j.
	active []uint32
	b      []float32
	// sparse: fwd row j holds (i, B_ij) for i ∈ KNN(j).
	side *itemSide
	// halfLife is the decay of past events in days (HalfLifeKey; 0 none).
	halfLife float64
}

// EASE defaults and limits.
const (
	// DefaultEASELambda is λ when Params.Extra has no "lambda".
	DefaultEASELambda = 100.0
	// DefaultEASEMaxDense is the largest number of items (with a training
	// positive) the dense closed form is used for: 12·8000² bytes = 768 MB
	// at the peak of a fit, a 256 MB model. docs/design.md caps a dense
	// n×n at 20,000 items (EASEMaxDenseCap).
	DefaultEASEMaxDense = 8000
	EASEMaxDenseCap     = 20000
	// DefaultEASENeighbours is the sparse variant's k_max.
	DefaultEASENeighbours = 200
)

// DefaultEASELambdas is EASE's grid of λ, in half decades (Steck 2019
// reports optima of 200–1000 on data sets of 10⁴–10⁵ users).
var DefaultEASELambdas = []float64{10, 30, 100, 300, 1000, 3000}

// Environment variables that override the EASE limits in every command
// (serve, train, eval, scale) when Params.Extra and Params.K do not set them.
const (
	EnvEASEMaxDense   = "RECSYS_EASE_MAX_DENSE_ITEMS"
	EnvEASENeighbours = "RECSYS_EASE_NEIGHBOURS"
)

// easeService is the service's use of EASE: compared in auto mode, with
// the λ grid where it won: 100 on Last.fm, 300 on MovieLens 100K, 3000 on
// the 1M-event scale data, and 1000 so that the grid has no decade gap; 10
// and 30 never won under a random validation split (docs/evaluation.md).
// Each λ is one dense fit.
var easeService = Service{Auto: true, Settings: []map[string]float64{{"lambda": 100}, {"lambda": 300}, {"lambda": 1000}, {"lambda": 3000}}}

// easeCandidates is EASE's grid: λ from g.Extra["ease"] ("lambda" keys),
// else DefaultEASELambdas, ascending.
func easeCandidates(g Grid, _ Caps) []Params {
	var out []Params
	for _, e := range g.Extra["ease"] {
		out = append(out, Params{Extra: e})
	}
	if len(out) > 0 {
		return out
	}
	for _, l := range DefaultEASELambdas {
		out = append(out, Params{Extra: map[string]float64{"lambda": l}})
	}
	return out
}

func (m *EASE) Name() string { return "ease" }

// easeLimits reads λ, the dense limit and k_max from p, the environment
// and the defaults, in that order.
func easeLimits(p Params) (lambda float64, maxDense, k int, err error) {
	lambda = DefaultEASELambda
	if v, ok := p.Extra["lambda"]; ok {
		lambda = v
	}
	if !(lambda > 0) || math.IsInf(lambda, 0) {
		return 0, 0, 0, fmt.Errorf("recsys: ease: lambda %v must be positive and finite", lambda)
	}
	envInt := func(name string, def, limit int) (int, error) {
		s := os.Getenv(name)
		if s == "" {
			return def, nil
		}
		v, err := strconv.Atoi(s)
		if err != nil || v < 0 || v > limit {
			return 0, fmt.Errorf("recsys: ease: %s=%q: want an integer in [0, %d]", name, s, limit)
		}
		return v, nil
	}
	if v, ok := p.Extra["max_dense"]; ok {
		maxDense = int(v)
	} else if maxDense, err = envInt(EnvEASEMaxDense, DefaultEASEMaxDense, EASEMaxDenseCap); err != nil {
		return 0, 0, 0, err
	}
	if maxDense > EASEMaxDenseCap {
		return 0, 0, 0, fmt.Errorf("recsys: ease: max_dense %d is above %d items", maxDense, EASEMaxDenseCap)
	}
	k = p.K
	if k <= 0 {
		if k, err = envInt(EnvEASENeighbours, DefaultEASENeighbours, 1<<20); err != nil {
			return 0, 0, 0, err
		}
		if k == 0 {
			k = DefaultEASENeighbours
		}
	}
	return lambda, maxDense, k, nil
}

func (m *EASE) Fit(ctx context.Context, x *Matrix, p Params) error {
	lambda, maxDense, k, err := easeLimits(p)
	if err != nil {
		return err
	}
	h, err := halfLifeOf(p, 0)
	if err != nil {
		return err
	}
	*m = EASE{lambda: lambda, nItems: x.Items(), halfLife: h}
	if activeItems(x) <= maxDense {
		active := make([]uint32, 0, x.Items())
		for i := range x.Items() {
			if x.ItemCount(i) > 0 {
				active = append(active, uint32(i))
			}
		}
		return m.fitDense(ctx, x, active, p.Progress)
	}
	m.k = k
	return m.fitSparse(ctx, x, p)
}

// fitDense computes B = I − P·diag(1/diag P), P = (XᵀX + λI)⁻¹ (Steck
// 2019, Eq. 8) over the active items.
func (m *EASE) fitDense(ctx context.Context, x *Matrix, active []uint32, progress ProgressFunc) error {
	n := len(active)
	pos := make([]int32, x.Items())
	for i := range pos {
		pos[i] = -1
	}
	for a, i := range active {
		pos[i] = int32(a)
	}
	// The upper triangle of G + λI, row a by row a in parallel: row a
	// counts, for every user of item a, the user's items b ≥ a.
	g := make([]float64, n*n)
	err := ParallelFor(ctx, n, 16, "ease gram", progress, func() func(lo, hi int) {
		return func(lo, hi int) {
			for a := lo; a < hi; a++ {
				row := g[a*n : (a+1)*n]
				for _, u := range x.Col(int(active[a])) {
					for _, i := range x.Row(int(u)) {
						if b := int(pos[i]); b >= a {
							row[b]++
						}
					}
				}
				row[a] += m.lambda
			}
		}
	})
	if err != nil {
		return err
	}
	if n > 0 {
		if progress != nil {
			progress("ease inverse", 0, 1)
		}
		t, ok := lapack64.Potrf(blas64.Symmetric{N: n, Stride: n, Data: g, Uplo: blas.Upper})
		if ok {
			_, ok = lapack64.Potri(t)
		}
		if !ok {
			return fmt.Errorf("recsys: ease: XᵀX + %gI is not positive definite", m.lambda)
		}
		if progress != nil {
			progress("ease inverse", 1, 1)
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	// P is in the upper triangle of g: P_ij = g[min(i,j)·n + max(i,j)].
	b := make([]float32, n*n)
	err = ParallelFor(ctx, n, 64, "ease weights", progress, func() func(lo, hi int) {
		return func(lo, hi int) {
			for i := lo; i < hi; i++ {
				row := b[i*n : (i+1)*n]
				for j := range row {
					if j == i {
						continue
					}
					pij := g[min(i, j)*n+max(i, j)]
					row[j] = float32(0 - pij/g[j*n+j]) // +0, not −0, where P_ij = 0
				}
			}
		}
	})
	if err != nil {
		return err
	}
	m.active, m.b = active, b
	return nil
}

// easeFitGrid is ease's Kind.FitGrid: above the dense limit the
// candidates (a λ grid at one k_max) share one pass over the items, each
// item's Gram matrix over KNN(j) counted once and factorised per λ
// (fitSparseGrid), the same models byte for byte as one Fit per candidate.
// Below the limit it returns nil, and Tune fits the dense closed form per
// candidate (its m×m buffers are not held for a whole grid).
func easeFitGrid(ctx context.Context, x *Matrix, cands []Params) ([]func() Model, error) {
	if len(cands) == 0 {
		return nil, nil
	}
	lambdas := make([]float64, len(cands))
	halfLives := make([]float64, len(cands))
	var maxDense, k int
	for c, p := range cands {
		l, md, kc, err := easeLimits(p)
		if err != nil {
			return nil, err
		}
		if halfLives[c], err = halfLifeOf(p, 0); err != nil {
			return nil, err
		}
		if c > 0 && (md != maxDense || kc != k) {
			return nil, nil // not one λ grid: one fit each
		}
		lambdas[c], maxDense, k = l, md, kc
	}
	if activeItems(x) <= maxDense {
		return nil, nil
	}
	sides, err := fitSparseGrid(ctx, x, k, lambdas, cands[0])
	if err != nil {
		return nil, err
	}
	out := make([]func() Model, len(cands))
	for c := range cands {
		out[c] = func() Model {
			m := &EASE{lambda: lambdas[c], k: k, nItems: x.Items(), side: sides[c], halfLife: halfLives[c]}
			sides[c] = nil // held by the model alone from here
			return m
		}
	}
	return out, nil
}

// activeItems counts the items with a training positive.
func activeItems(x *Matrix) int {
	n := 0
	for i := range x.Items() {
		if x.ItemCount(i) > 0 {
			n++
		}
	}
	return n
}

// fitSparse solves every column's ridge regression over its cosine KNN.
func (m *EASE) fitSparse(ctx context.Context, x *Matrix, p Params) error {
	sides, err := fitSparseGrid(ctx, x, m.k, []float64{m.lambda}, p)
	if err != nil {
		return err
	}
	m.side = sides[0]
	return nil
}

// fitSparseGrid solves column j's ridge regression b = (G_SS + λI)⁻¹ G_Sj
// over S = KNN(j) at k_max = k for every λ of lambdas: G_SS is counted once
// per item from the pair counter fsSLIM uses (shared through p.Cache, so
// the popular items' counts are one pass for slim and ease), G_Sj recovered
// exactly from the cosine values, and each λ costs one k×k Cholesky
// factorisation — O(n·k³) per λ, the counts O(n·k²) once.
func fitSparseGrid(ctx context.Context, x *Matrix, k int, lambdas []float64, p Params) ([]*itemSide, error) {
	nb, err := ItemNeighbours(ctx, x, SimCosine, Params{K: k, Cache: p.Cache, Progress: p.Progress})
	if err != nil {
		return nil, err
	}
	co, err := slimCounts(ctx, x, p)
	if err != nil {
		return nil, err
	}
	if co == nil {
		if co, err = newCoCounter(ctx, x, slimPopularItems); err != nil {
			return nil, err
		}
	}
	rows := make([][][]Neighbour, len(lambdas))
	for c := range rows {
		rows[c] = make([][]Neighbour, x.Items())
	}
	var bad atomic.Int64
	bad.Store(-1)
	err = ParallelFor(ctx, x.Items(), 16, "ease", p.Progress, func() func(lo, hi int) {
		s := &easeSolver{x: x, co: co, sc: newGramScratch(x.Users())}
		return func(lo, hi int) {
			for j := lo; j < hi; j++ {
				if !s.load(j, nb.Row(j)) {
					continue
				}
				for c, l := range lambdas {
					var ok bool
					if rows[c][j], ok = s.solve(l); !ok {
						bad.CompareAndSwap(-1, int64(j))
					}
				}
			}
		}
	})
	if err != nil {
		return nil, err
	}
	if j := bad.Load(); j >= 0 {
		return nil, fmt.Errorf("recsys: ease: the Gram matrix of item %d's neighbours is not positive definite", j)
	}
	out := make([]*itemSide, len(lambdas))
	for c := range out {
		out[c] = newRankedItemSide(x.Items(), fromRows(rows[c]))
		rows[c] = nil
	}
	return out, nil
}

// easeSolver is the per-goroutine scratch space of fitSparseGrid.
type easeSolver struct {
	x      *Matrix
	co     *coCounter
	sc     *gramScratch // for coCounter.gram
	feats  []Neighbour
	gram   []float64 // G_SS of the loaded column, row-major
	gj     []float64 // G_Sj
	g, rhs []float64 // G_SS + λI, factorised in place, and the solution
}

// load counts G_SS and G_Sj of column j over feats = KNN(j); it reports
// false when there is nothing to solve (no features: B_·j = 0).
func (s *easeSolver) load(j int, feats []Neighbour) bool {
	k := len(feats)
	s.feats = feats
	if k == 0 {
		return false
	}
	s.gram = grow(s.gram, k*k)
	s.gj = grow(s.gj, k)
	s.co.gram(feats, s.gram, s.sc)
	cj := float64(s.x.ItemCount(j))
	for q, f := range feats {
		// The cosine of two binary columns is co/√(c(j)·c(l)): recover
		// the integer count exactly (as fsSLIM's load).
		s.gj[q] = math.Round(f.Value * math.Sqrt(cj*float64(s.x.ItemCount(int(f.Index)))))
	}
	return true
}

// solve returns the loaded column of B for λ: the solution b of
// (G_SS + λI) b = G_Sj as (i, B_ij) entries, largest first.
func (s *easeSolver) solve(lambda float64) ([]Neighbour, bool) {
	k := len(s.feats)
	s.g = append(s.g[:0], s.gram...)
	s.rhs = append(s.rhs[:0], s.gj...)
	for a := range k {
		s.g[a*k+a] += lambda
	}
	t, ok := lapack64.Potrf(blas64.Symmetric{N: k, Stride: k, Data: s.g, Uplo: blas.Upper})
	if !ok {
		return nil, false
	}
	lapack64.Potrs(t, blas64.General{Rows: k, Cols: 1, Stride: 1, Data: s.rhs})
	out := make([]Neighbour, 0, k)
	for a, f := range s.feats {
		if s.rhs[a] != 0 {
			out = append(out, Neighbour{Index: f.Index, Value: s.rhs[a]})
		}
	}
	slices.SortFunc(out, CompareNeighbours)
	return out, true
}

func (m *EASE) Score(history []uint32, scores []float64) { m.ScoreWeighted(history, nil, scores) }

// HalfLife is the decay of past events in days (0: none).
func (m *EASE) HalfLife() float64 { return m.halfLife }

// ScoreWeighted is Score with history item k counting weights[k] (nil:
// 1 each), X·B over a weighted row.
func (m *EASE) ScoreWeighted(history []uint32, weights []float64, scores []float64) {
	if m.side != nil {
		if weights == nil {
			FillScores(scores, m.nItems, func(buf []float64) { m.side.accumulate(history, buf, 1) })
			return
		}
		FillScores(scores, m.nItems, func(buf []float64) {
			for k := range history {
				m.side.accumulate(history[k:k+1:k+1], buf, weights[k])
			}
		})
		return
	}
	// Dense: only the active items are written, so scores of any length
	// are filled without a buffer of the fitted item count.
	clear(scores)
	n := len(m.active)
	prev := -1
	for k, i := range history {
		if int(i) == prev {
			continue
		}
		prev = int(i)
		a, ok := slices.BinarySearch(m.active, i)
		if !ok {
			continue
		}
		if weights == nil {
			for c, v := range m.b[a*n : (a+1)*n] {
				if j := m.active[c]; int(j) < len(scores) {
					scores[j] += float64(v)
				}
			}
			continue
		}
		w := weights[k]
		for c, v := range m.b[a*n : (a+1)*n] {
			if j := m.active[c]; int(j) < len(scores) {
				scores[j] += w * float64(v)
			}
		}
	}
}

func (m *EASE) ScoreUser(_ int, history []uint32, scores []float64) { m.Score(history, scores) }

// ranksTop is false for the dense model, which RankTop scores whole
// (AsTopRanker).
func (m *EASE) ranksTop() bool { return m.side != nil && m.side.rank != nil }

// RankTop implements TopRanker: the sparse model's weights are KNN lists,
// ranked as ItemP's (rankIndex takes their negative entries), so a request
// scores only the blocks of items that can still make the top n; the
// dense model scores every item.
func (m *EASE) RankTop(history []uint32, popularity []uint32, skip func(uint32) bool, n int, scores []float64) []uint32 {
	if !m.ranksTop() || len(scores) < m.side.nItems {
		return scoreTop(m, history, popularity, skip, n, scores)
	}
	return m.side.rank.topN(history, popularity, skip, n, scores)
}

// Explain implements Explainer: the consumed items i with B_ij, the terms
// of score(u, j).
func (m *EASE) Explain(history []uint32, items []uint32, n int) [][]Contribution {
	out := make([][]Contribution, len(items))
	for k, j := range items {
		if m.side != nil {
			out[k] = TopContributions(m.side.explain(history, j, 1), n)
			continue
		}
		col, ok := slices.BinarySearch(m.active, j)
		if !ok {
			continue
		}
		dim := len(m.active)
		var cs []Contribution
		prev := -1
		for _, i := range history {
			a, ok := slices.BinarySearch(m.active, i)
			if !ok || int(i) == prev {
				continue
			}
			prev = int(i)
			if w := m.b[a*dim+col]; w != 0 {
				cs = append(cs, Contribution{Index: i, Weight: float64(w)})
			}
		}
		out[k] = TopContributions(cs, n)
	}
	return out
}

// Params reports λ, and k_max for the sparse variant.
func (m *EASE) Params() map[string]float64 {
	p := map[string]float64{"lambda": m.lambda}
	if m.side != nil {
		p["k"] = float64(m.k)
	}
	if m.halfLife > 0 {
		p[HalfLifeKey] = m.halfLife
	}
	return p
}

// Layout after the header: λ, k_max, the item count, then 0 and the dense
// B (the active items, then m² float32 bits row by row) or 1 and the
// sparse lists.
func (m *EASE) MarshalBinary() ([]byte, error) {
	if m.side == nil && m.b == nil {
		return nil, fmt.Errorf("recsys: ease is not fitted")
	}
	e := newEncoder("ease")
	e.Float64(m.lambda)
	e.Uvarint(uint64(m.k))
	e.Uvarint(uint64(m.nItems))
	if m.side != nil {
		e.Byte(1)
		WriteNeighbours(e, m.side.fwd)
		writeHalfLife(e, m.halfLife)
		return e.Bytes(), nil
	}
	e.Byte(0)
	e.Uvarint(uint64(len(m.active)))
	e.Uint32s(m.active)
	raw := make([]byte, 4*len(m.b))
	for k, v := range m.b {
		binary.LittleEndian.PutUint32(raw[4*k:], math.Float32bits(v))
	}
	e.Raw(raw)
	writeHalfLife(e, m.halfLife)
	return e.Bytes(), nil
}

func (m *EASE) UnmarshalBinary(data []byte) error {
	d := newDecoder(data, "ease")
	lambda := d.Finite()
	k := d.Bounded(1 << 32)
	n := d.Bounded(1 << 32)
	out := EASE{lambda: lambda, k: k, nItems: n}
	switch mode := d.Byte(); {
	case d.Err() != nil:
	case mode == 1:
		fwd := ReadNeighbours(d, n)
		if d.Err() == nil && fwd.Rows() != n {
			d.Fail(nil)
		}
		if d.Err() == nil {
			out.side = newRankedItemSide(n, fwd)
			out.side.rank.prepare() // a decoded model is about to serve
		}
	case mode == 0:
		out.active, out.b = readDenseB(d, n)
	default:
		d.Fail(nil)
	}
	out.halfLife = readHalfLife(d)
	if err := d.Finish(); err != nil {
		return err
	}
	if !(lambda > 0) {
		return errCorrupt
	}
	*m = out
	return nil
}

// readDenseB reads the active items (strictly ascending, below n) and the
// m×m finite float32 weights.
func readDenseB(d *blob.Decoder, n int) ([]uint32, []float32) {
	cnt := d.Count(4)
	active := d.Uint32s(cnt)
	if d.Err() != nil {
		return nil, nil
	}
	for a, i := range active {
		if int(i) >= n || (a > 0 && i <= active[a-1]) {
			d.Fail(nil)
			return nil, nil
		}
	}
	if cnt > 0 && cnt > d.Len()/4/cnt {
		d.Fail(nil)
		return nil, nil
	}
	raw := d.Raw(4 * cnt * cnt)
	if d.Err() != nil {
		return nil, nil
	}
	b := make([]float32, cnt*cnt)
	for k := range b {
		v := math.Float32frombits(binary.LittleEndian.Uint32(raw[4*k:]))
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			d.Fail(nil)
			return nil, nil
		}
		b[k] = v
	}
	return active, b
}

// easeTime is EASE's training time at the measured catalogue: fitted as
// itemknnTime's to docs/performance.md's "Auto mode at 1M, 5M and 20M"
// (72, 88, 107 s at 1M, 5M and 20M positives), where its 27,000 items
// took the sparse variant. That time is the items' k_max × k_max solves,
// one per item and λ, so easeCost scales it by the items over
// easeTimeItems (an assumption of the algorithm, not yet measured at
// another catalogue size).
var easeTime = TimeLaw{At1M: 71.7, Exponent: 0.132}

const easeTimeItems = 27000

func easeCost(s Shape) Cost {
	b, what := easeMemory(s)
	return Cost{Seconds: easeTime.Seconds(s.Positives) * float64(s.Items) / easeTimeItems, Bytes: b, Memory: what}
}

// easeMemory is EASE's, the items taken as all active. Dense (up to the
// dense limit, easeLimits): the m×m float64 Gram matrix inverted in place
// and the m×m float32 weights, with the best model of the search held
// beside the one being fitted: 16·m². Sparse: the cosine lists at k_max
// in both caches, and for every λ of the service's grid (easeService),
// which easeFitGrid fits at once, its solved rows, their lists and their
// ranked index; the pair counter; every list full.
func easeMemory(s Shape) (int64, string) {
	_, maxDense, k, err := easeLimits(Params{})
	if err != nil {
		maxDense, k = DefaultEASEMaxDense, DefaultEASENeighbours
	}
	n := int64(s.Items)
	if s.Items <= maxDense {
		return 16 * n * n, fmt.Sprintf("a dense %s² Gram matrix, its inverse and the weights", FormatCount(n))
	}
	k = max(0, min(k, s.Items-1))
	lambdas := len(easeService.Settings)
	return (2+3*int64(lambdas))*ListBytes(s.Items, k) + coCounterBytes(s),
		fmt.Sprintf("sparse weights of %s items × %d neighbours for each of %d λ", FormatCount(n), k, lambdas)
}
