package febr

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/recsys-engine/recsys/recsys"
)

// extractorFor builds the extractor of variant v with neighbourhood
// size p.K on x: item lists from p.Cache (cosine or KUNN), or the fsSLIM
// weights slimW over the cosine KNN(i) (fitted with p.L1, p.L2 when slimW
// is nil); the user side over x.
func extractorFor(ctx context.Context, x *recsys.Matrix, v variant, p recsys.Params, slimW *recsys.Neighbours) (*extractor, error) {
	var items *itemSide
	if v.item {
		var (
			nb  *recsys.Neighbours
			err error
		)
		switch v.affinity {
		case recsys.SimCosine, recsys.SimKUNN:
			nb, err = recsys.ItemNeighbours(ctx, x, v.affinity, p)
		case affSLIM:
			nb, err = recsys.ItemNeighbours(ctx, x, recsys.SimCosine, p)
			if err != nil {
				return nil, err
			}
			w := slimW
			if w == nil {
				if w, err = recsys.FitSLIM(ctx, x, nb, p); err != nil {
					return nil, err
				}
			}
			nb = slimAffinity(nb, w, x.Items())
		default:
			err = fmt.Errorf("febr: unknown affinity %q", v.affinity)
		}
		if err != nil {
			return nil, err
		}
		items = newItemSide(x.Items(), nb)
	}
	var users *recsys.UserNeighbourhood
	if v.user {
		// KNN(u) of the training users memoised at k_max in the cache,
		// shared by the grid, the λ runs, the validation evaluations and
		// OPT-ADG's draws (and with userknn, kunn-u): a search costs
		// O(Σ_{j ∈ O⁺u} c(j)) per user, millions of operations at
		// MovieLens-20M's shape.
		users = recsys.NewUserNeighbourhood(x, p.K, v.affinity, p.Cache)
	}
	return newExtractor(p.K, x.Items(), items, users), ctx.Err()
}

// slimAffinity returns, for every item i, its cosine KNN(i) in KNN order
// with A(i, j) = W(j, i), the fsSLIM weight (0 where fsSLIM set it to 0):
// the SLIM affinity matrix of §4.7.3 with ActiveItems(u, i) = O⁺u ∩ KNN(i)
// as for the other affinities, so that agglen, aggmean, aggmin and aggstd
// see the neighbours fsSLIM zeroed.
func slimAffinity(knn, w *recsys.Neighbours, nItems int) *recsys.Neighbours {
	weight := make([]float64, nItems)
	out := knn.Clone()
	for i := range out.Rows() {
		for _, e := range w.Row(i) {
			weight[e.Index] = e.Value
		}
		row := out.Row(i)
		for k := range row {
			row[k].Value = weight[row[k].Index]
		}
		for _, e := range w.Row(i) {
			weight[e.Index] = 0
		}
	}
	return out
}

// itemSide is the item side of a representation: KNN(i) with A(i, j) for
// every item i, and the same entries indexed by j, which extract walks
// from the user's items (Thm 4.3).
type itemSide struct {
	fwd, rev *recsys.Neighbours
}

func newItemSide(nItems int, fwd *recsys.Neighbours) *itemSide {
	return &itemSide{fwd: fwd, rev: fwd.Reverse(nItems)}
}

// initialTheta is the aggsum predictor: θ = 1 on each side's aggsum, 0
// elsewhere. For FEBRi and FEBRu it ranks exactly as item-p, SLIM and
// user-p do (z-scoring is an increasing affine map and missing pairs have
// aggsum 0, the smallest possible), so OPT-ADG starts from the baseline
// and, with early stopping keeping the best θ, ends no worse on the
// validation set.
func (e *extractor) initialTheta() []float64 {
	theta := make([]float64, e.dim)
	for off := 0; off < e.dim; off += featuresPerSide {
		theta[off+aggSum] = 1
	}
	return theta
}

// extractor computes the FEBR feature vectors φ(u, i) of one variant
// (§4.5.2–4.5.4): the item side from ActiveItems(u, i) = O⁺u ∩ KNN(i) with
// the stored item affinities, the user side from ActiveUsers(u, i) =
// O⁺i ∩ KNN(u) with KNN(u) computed from the (live) history. It is
// immutable once built and safe for concurrent use.
type extractor struct {
	k      int
	nItems int
	items  *itemSide                 // nil for FEBRu
	users  *recsys.UserNeighbourhood // nil for FEBRi
	dim    int
	// mean and std z-score every feature (std 1 where a feature does not
	// vary); nil until the statistics are known.
	mean, std, invStd []float64
	pool              sync.Pool
}

type scratch struct {
	acc     [2]sideAcc
	mark    []bool
	touched []uint32
	raw     []float64
	nbs     []recsys.Neighbour // KNN(u)
}

func newExtractor(k, nItems int, items *itemSide, users *recsys.UserNeighbourhood) *extractor {
	e := &extractor{k: k, nItems: nItems, items: items, users: users}
	if items != nil {
		e.dim += featuresPerSide
	}
	if users != nil {
		e.dim += featuresPerSide
	}
	e.pool.New = func() any {
		sc := &scratch{mark: make([]bool, nItems), raw: make([]float64, e.dim)}
		if items != nil {
			sc.acc[0] = newSideAcc(nItems)
		}
		if users != nil {
			sc.acc[1] = newSideAcc(nItems)
		}
		return sc
	}
	return e
}

func (e *extractor) touch(sc *scratch, i uint32) {
	if !sc.mark[i] {
		sc.mark[i] = true
		sc.touched = append(sc.touched, i)
	}
}

// extract calls visit with the raw feature vector of every item whose
// features are not missing on some side, in ascending item order, for a
// user with the given history (sorted; items ≥ nItems are ignored) who is
// row self of the training matrix (−1 for none: KNN(u) is over U \ u). The
// slice passed to visit is reused.
func (e *extractor) extract(self int, history []uint32, visit func(i uint32, raw []float64)) {
	sc := e.pool.Get().(*scratch)
	defer e.pool.Put(sc)
	sc.touched = sc.touched[:0]
	if e.items != nil {
		// aggregates over O⁺u ∩ KNN(i): walk the reversed lists from the
		// user's items (Thm 4.3).
		acc := sc.acc[0]
		prev := -1
		for _, j := range history {
			if int(j) >= e.nItems || int(j) == prev {
				continue
			}
			prev = int(j)
			for _, nb := range e.items.rev.Row(int(j)) {
				if acc.add(nb.Index, nb.Value) {
					e.touch(sc, nb.Index)
				}
			}
		}
	}
	if e.users != nil {
		// aggregates over O⁺i ∩ KNN(u) (Cor. 4.1).
		acc := sc.acc[1]
		sc.nbs = e.users.AppendNeighbours(sc.nbs[:0], self, history)
		for _, nb := range sc.nbs {
			for _, i := range e.users.Matrix().Row(int(nb.Index)) {
				if acc.add(i, nb.Value) {
					e.touch(sc, i)
				}
			}
		}
	}
	// Ascending item order: sort the touched items, or scan the marks
	// when most items are touched.
	if len(sc.touched) > e.nItems/16 {
		sc.touched = sc.touched[:0]
		for i, m := range sc.mark {
			if m {
				sc.touched = append(sc.touched, uint32(i))
			}
		}
	} else {
		slices.Sort(sc.touched)
	}
	for _, i := range sc.touched {
		sc.mark[i] = false
		off := 0
		if e.items != nil {
			sc.acc[0].features(i, e.k, sc.raw[:featuresPerSide])
			off = featuresPerSide
		}
		if e.users != nil {
			sc.acc[1].features(i, e.k, sc.raw[off:off+featuresPerSide])
		}
		visit(i, sc.raw)
	}
}

// missingRaw is the raw feature vector of a pair with no active item or
// user on any side: aggregates 0 and every indicator 1.
func (e *extractor) missingRaw() []float64 {
	raw := make([]float64, e.dim)
	for off := 0; off < e.dim; off += featuresPerSide {
		raw[off+aggMissing] = 1
	}
	return raw
}

// zscore writes (raw − mean)/std into out (raw and out may be the same
// slice): the one conversion used by training and scoring alike, so that
// both see identical values.
func (e *extractor) zscore(raw []float64, out []float64) {
	for f, v := range raw {
		out[f] = (v - e.mean[f]) * e.invStd[f]
	}
}

// setStats sets the z-score statistics.
func (e *extractor) setStats(mean, std []float64) {
	e.mean, e.std = mean, std
	e.invStd = make([]float64, len(std))
	for f, s := range std {
		e.invStd[f] = 1 / s
	}
}

// block holds the z-scored features of one user's candidate items:
// the items with a non-missing feature (§4.5.6), ascending, row q of feat
// belonging to items[q].
type block struct {
	items []uint32
	feat  []float64
}

// block extracts the z-scored features of every candidate item of a user.
func (e *extractor) block(self int, history []uint32, b *block) {
	b.items, b.feat = b.items[:0], b.feat[:0]
	e.extract(self, history, func(i uint32, raw []float64) {
		b.items = append(b.items, i)
		n := len(b.feat)
		b.feat = slices.Grow(b.feat, e.dim)[:n+e.dim]
		e.zscore(raw, b.feat[n:])
	})
}

func (b *block) row(q, dim int) []float64 { return b.feat[q*dim : (q+1)*dim] }

func (b *block) bytes() int64 { return int64(cap(b.items))*4 + int64(cap(b.feat))*8 }
