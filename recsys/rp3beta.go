package recsys

import (
	"context"
	"fmt"
	"math"
	"slices"
	"unsafe"
)

// RP3Beta is RP3β of Paudel et al. (2017), "Updatable, Accurate, Diverse,
// and Scalable Recommendations for Interactive Applications": the item-item
// weights of a three-step random walk on the user–item graph, item i →
// user u → item j, each step to a uniformly chosen neighbour,
//
//	W(i, j) = Σ_u X_ui X_uj / (c(i)·c(u))   (P3, rows sum to 1),
//
// divided by the popularity of the destination, W'(i, j) = W(i, j)/c(j)^β,
// and kept for the k largest j ≠ i of every row i. score(u, j) =
// Σ_{i ∈ O⁺u} W'(i, j), from the live history like item-p; β = 0 is P3.
type RP3Beta struct {
	k    int
	beta float64
	// side.rev row i is the kept row of W' (targets j, best first) and
	// side.fwd row j the items i whose row keeps j.
	side *itemSide
}

// DefaultRP3Betas is RP3β's secondary grid (Paudel et al. 2017 tune β in
// [0, 1]); DefaultRP3Beta is β when Params.Extra has no "beta".
var DefaultRP3Betas = []float64{0, 0.25, 0.5, 0.75, 1}

const DefaultRP3Beta = 0.5

// rp3Candidates is RP3β's grid: every k capped by the longest item
// neighbour list (W(i, j) > 0 exactly when i and j share a user, as the
// cosine similarity) with every β of g.Extra["rp3beta"] ("beta" keys),
// else DefaultRP3Betas.
func rp3Candidates(g Grid, c Caps) []Params {
	secondary := g.Extra["rp3beta"]
	if len(secondary) == 0 {
		for _, b := range DefaultRP3Betas {
			secondary = append(secondary, map[string]float64{"beta": b})
		}
	}
	var out []Params
	for _, k := range CapK(g.K, c.Items) {
		for _, e := range secondary {
			out = append(out, Params{K: k, Extra: e})
		}
	}
	return out
}

func (m *RP3Beta) Name() string { return "rp3beta" }

// rp3Beta is β of p (DefaultRP3Beta when Extra has no "beta").
func rp3Beta(p Params) (float64, error) {
	beta := DefaultRP3Beta
	if v, ok := p.Extra["beta"]; ok {
		beta = v
	}
	if !(beta >= 0) || math.IsInf(beta, 0) {
		return 0, fmt.Errorf("recsys: rp3beta: beta %v must be finite and ≥ 0", beta)
	}
	return beta, nil
}

func (m *RP3Beta) Fit(ctx context.Context, x *Matrix, p Params) error {
	p = p.WithDefaults()
	beta, err := rp3Beta(p)
	if err != nil {
		return err
	}
	rows, err := rp3Rows(ctx, x, []float64{beta}, p.K, p.Progress)
	if err != nil {
		return err
	}
	m.set(x.Items(), p.K, beta, rows[0])
	return nil
}

func (m *RP3Beta) set(n, k int, beta float64, rows *Neighbours) {
	m.k, m.beta = k, beta
	m.side = &itemSide{nItems: n, fwd: rows.Reverse(n), rev: rows}
}

// rp3FitGrid is rp3beta's Kind.FitGrid: one walk per item serves every
// candidate, each β keeping the k_max best of the row, and a candidate's
// rows at k are the prefixes (KNN order is total, so the k best are the
// first k of the k_max best): the same models as one Fit per candidate,
// at one walk pass (Σ_u |O⁺u|²) instead of one per grid point. The k_max
// rows of every β are held until the last model is made.
func rp3FitGrid(ctx context.Context, x *Matrix, raw []Params) ([]func() Model, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	var betas []float64
	at := make([]int, len(raw)) // the candidate's index in betas
	kmax := 0
	cands := make([]Params, len(raw))
	for c, p := range raw {
		cands[c] = p.WithDefaults()
		b, err := rp3Beta(cands[c])
		if err != nil {
			return nil, err
		}
		if at[c] = slices.Index(betas, b); at[c] < 0 {
			at[c], betas = len(betas), append(betas, b)
		}
		kmax = max(kmax, cands[c].K)
	}
	if int64(len(betas))*int64(x.Items())*int64(kmax)*int64(unsafe.Sizeof(Neighbour{})) > rp3GridMemory {
		return nil, nil // one fit each: a grid past k_max's memory (an extension to a large k)
	}
	rows, err := rp3Rows(ctx, x, betas, kmax, cands[0].Progress)
	if err != nil {
		return nil, err
	}
	out := make([]func() Model, len(cands))
	for c, p := range cands {
		out[c] = func() Model {
			m := &RP3Beta{}
			m.set(x.Items(), p.K, betas[at[c]], rows[at[c]].Truncate(p.K))
			return m
		}
	}
	return out, nil
}

// rp3GridMemory bounds the k_max rows rp3FitGrid holds for all β (β count
// × items × k_max entries of 16 bytes): 512 MiB holds the service's grid
// at 27,000 items (5 β × k_max = 200: 432 MB); a larger grid, such as an
// edge extension to k = 400 or 800, is fitted one candidate at a time.
var rp3GridMemory int64 = 512 << 20

// rp3Rows walks from every item once and keeps, for each β, the k largest
// W'(i, j) = W(i, j)·c(j)^−β of every row i, j ≠ i, in KNN order.
func rp3Rows(ctx context.Context, x *Matrix, betas []float64, k int, progress ProgressFunc) ([]*Neighbours, error) {
	n := x.Items()
	// scale[b][j] = c(j)^−β, for the destinations a walk can reach (c(j) ≥ 1).
	scale := make([][]float64, len(betas))
	rows := make([][][]Neighbour, len(betas))
	for b, beta := range betas {
		scale[b], rows[b] = make([]float64, n), make([][]Neighbour, n)
		for j := range n {
			if c := x.ItemCount(j); c > 0 {
				scale[b][j] = math.Pow(float64(c), -beta)
			}
		}
	}
	err := ParallelFor(ctx, n, 64, "rp3beta", progress, func() func(lo, hi int) {
		acc := make([]float64, n)
		var (
			touched []uint32
			best    topK
			arena   rowArena
		)
		return func(lo, hi int) {
			for i := lo; i < hi; i++ {
				touched = rp3Walk(x, i, acc, touched[:0])
				for b := range betas {
					best.reset(k)
					for _, j := range touched {
						if int(j) != i {
							best.push(Neighbour{Index: j, Value: acc[j] * scale[b][j]})
						}
					}
					rows[b][i] = arena.keep(best.sorted())
				}
				for _, j := range touched {
					acc[j] = 0
				}
			}
		}
	})
	if err != nil {
		return nil, err
	}
	out := make([]*Neighbours, len(betas))
	for b := range out {
		out[b] = fromRows(rows[b])
		rows[b] = nil
	}
	return out, nil
}

// rp3Walk adds to acc[j] the probability W(i, j) that the walk i → u → j
// ends at j, for every j (i included), and appends to touched the j it
// reached first: a row of P3, summing to 1 when i has a user.
func rp3Walk(x *Matrix, i int, acc []float64, touched []uint32) []uint32 {
	ci := float64(x.ItemCount(i))
	for _, u := range x.Col(i) {
		w := 1 / (ci * float64(x.UserCount(int(u))))
		for _, j := range x.Row(int(u)) {
			if acc[j] == 0 {
				touched = append(touched, j)
			}
			acc[j] += w
		}
	}
	return touched
}

func (m *RP3Beta) Score(history []uint32, scores []float64) {
	FillScores(scores, m.side.nItems, func(buf []float64) { m.side.accumulate(history, buf, 1) })
}

func (m *RP3Beta) ScoreUser(_ int, history []uint32, scores []float64) { m.Score(history, scores) }

// Similar returns the kept row of W': where the walk from item goes most,
// popularity discounted, best first.
func (m *RP3Beta) Similar(item uint32) []Neighbour {
	if int(item) >= m.side.nItems {
		return nil
	}
	return m.side.rev.Row(int(item))
}

// Explain implements Explainer: the consumed items i with W'(i, j).
func (m *RP3Beta) Explain(history []uint32, items []uint32, n int) [][]Contribution {
	out := make([][]Contribution, len(items))
	for k, j := range items {
		out[k] = TopContributions(m.side.explain(history, j, 1), n)
	}
	return out
}

// Params reports k and β.
func (m *RP3Beta) Params() map[string]float64 {
	return map[string]float64{"k": float64(m.k), "beta": m.beta}
}

// Layout after the header: k, β, the item count, then the kept rows of W'.
func (m *RP3Beta) MarshalBinary() ([]byte, error) {
	if m.side == nil {
		return nil, fmt.Errorf("recsys: rp3beta is not fitted")
	}
	e := newEncoder("rp3beta")
	e.Uvarint(uint64(m.k))
	e.Float64(m.beta)
	e.Uvarint(uint64(m.side.nItems))
	WriteNeighbours(e, m.side.rev)
	return e.Bytes(), nil
}

func (m *RP3Beta) UnmarshalBinary(data []byte) error {
	d := newDecoder(data, "rp3beta")
	k := d.Bounded(1 << 32)
	beta := d.Finite()
	n := d.Bounded(1 << 32)
	out := ReadNeighbours(d, n)
	if err := d.Finish(); err != nil {
		return err
	}
	if out.Rows() != n || beta < 0 {
		return errCorrupt
	}
	m.k, m.beta = k, beta
	m.side = &itemSide{nItems: n, fwd: out.Reverse(n), rev: out}
	return nil
}

// rp3betaTime is rp3beta's training time, fitted to the tune + fit wall
// seconds of docs/performance.md's "Auto mode at 1M, 5M and 20M" (44, 40,
// 56 s at 1M, 5M and 20M positives, 27,000 items; least squares of log
// seconds on log positives).
var rp3betaTime = TimeLaw{At1M: 41.1, Exponent: 0.077}

// rp3betaMemory is rp3beta's: the rows at k_max of every β of the grid
// (DefaultRP3Betas), held by rp3Rows and copied into lists, when they fit
// rp3GridMemory, else one fit's at a time; and the chosen model's lists
// with their ranked index.
func rp3betaMemory(s Shape) (int64, string) {
	l := ListBytes(s.Items, s.K())
	held := int64(len(DefaultRP3Betas)) * l
	if held <= rp3GridMemory {
		return 2*held + 2*l, fmt.Sprintf("walk rows of %d β × %s items × %d", len(DefaultRP3Betas), FormatCount(int64(s.Items)), s.K())
	}
	return 4 * l, fmt.Sprintf("walk rows of %s items × %d", FormatCount(int64(s.Items)), s.K())
}
