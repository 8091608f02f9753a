package recsys

import (
	"context"
	"fmt"
)

// ItemP is the item-based predictor score(u, i) = aggsum(φ_item(u, i)) of
// dissertation §4.7.2 over one of three affinity matrices:
//
//   - itemknn: A(i, j) = cos(i, j), j ∈ KNN(i) by cosine (§4.5.2; Deshpande
//     and Karypis 2004, as the dissertation discusses it in §4.5.5);
//   - kunn-i: A(i, j) the KUNN item affinity of Eq. (4.5), with KNN(i) by
//     that same similarity (sim = sim_KUNN, Thm 4.4);
//   - slim: A = Wᵀ learnt by fsSLIM over the cosine KNN(i) (§4.5.5, Ning and
//     Karypis 2011), see fitSLIM.
type ItemP struct {
	name   string
	k      int
	l1, l2 float64
	side   *itemSide
	// halfLife is the decay of past events in days (HalfLifeKey; 0 none),
	// which ScoreDecayed applies to the history.
	halfLife float64
}

// itemKCandidates is the grid of the item-based model name (itemknn,
// kunn-i): k capped by the longest item neighbour list, with every
// setting of g.Extra[name] (a half-life) at each.
func itemKCandidates(name string) func(g Grid, c Caps) []Params {
	return func(g Grid, c Caps) []Params { return withSettings(kCandidates(CapK(g.K, c.Items)), g.Extra[name]) }
}

func (m *ItemP) Name() string { return m.name }

func (m *ItemP) Fit(ctx context.Context, x *Matrix, p Params) error {
	p = p.WithDefaults()
	h, err := halfLifeOf(p, 0)
	if err != nil {
		return err
	}
	m.halfLife = h
	var nb *Neighbours
	switch m.name {
	case "itemknn":
		nb, err = ItemNeighbours(ctx, x, SimCosine, p)
	case "kunn-i":
		nb, err = ItemNeighbours(ctx, x, SimKUNN, p)
	case "slim":
		nb, err = ItemNeighbours(ctx, x, SimCosine, p)
		var co *coCounter
		if err == nil {
			co, err = slimCounts(ctx, x, p)
		}
		if err == nil {
			var init *Neighbours
			if w, ok := p.Init.(*ItemP); ok && w.name == "slim" && w.side != nil && w.side.nItems == x.Items() {
				init = w.side.fwd
			}
			nb, err = fitSLIM(ctx, x, nb, init, co, p)
		}
		m.l1, m.l2 = p.L1, p.L2
	default:
		return fmt.Errorf("recsys: unknown item model %q", m.name)
	}
	if err != nil {
		return err
	}
	m.k = p.K
	m.side = newRankedItemSide(x.Items(), nb)
	return nil
}

func (m *ItemP) Score(history []uint32, scores []float64) {
	FillScores(scores, m.side.nItems, func(buf []float64) { m.side.accumulate(history, buf, 1) })
}

// RankTop finds the n best items from the blocks of the ranked reversed
// lists whose bound can still beat the n-th best (see rankIndex), with the
// same answer as Score and TopN over the whole catalogue.
func (m *ItemP) RankTop(history []uint32, popularity []uint32, skip func(uint32) bool, n int, scores []float64) []uint32 {
	if len(scores) < m.side.nItems {
		return scoreTop(m, history, popularity, skip, n, scores)
	}
	return m.side.rank.topN(history, popularity, skip, n, scores)
}

func (m *ItemP) ScoreUser(_ int, history []uint32, scores []float64) { m.Score(history, scores) }

// HalfLife is the decay of past events in days (0: none).
func (m *ItemP) HalfLife() float64 { return m.halfLife }

// ScoreWeighted is Score with history item k counting weights[k]: the
// item-based score is linear in the user's row.
func (m *ItemP) ScoreWeighted(history []uint32, weights []float64, scores []float64) {
	FillScores(scores, m.side.nItems, func(buf []float64) {
		for k := range history {
			m.side.accumulate(history[k:k+1:k+1], buf, weights[k])
		}
	})
}

// ScoreSparse scores the items the history reaches through the reversed
// lists alone, when that is few of a wide catalogue (SparseScorer).
func (m *ItemP) ScoreSparse(history []uint32, scores []float64, touched []uint32) ([]uint32, bool) {
	return m.side.rank.scoreSparse(history, scores, touched)
}

// Similar returns KNN(i) with A(i, j), best first (for SLIM: by cosine
// order, with the learnt weights; zero weights are not stored).
func (m *ItemP) Similar(item uint32) []Neighbour {
	if int(item) >= m.side.nItems {
		return nil
	}
	return m.side.fwd.Row(int(item))
}

// Affinities returns the item lists the model scores with, row i as
// Similar(i) lists it (for slim, the non-zero fsSLIM weights W(j, i));
// nil before Fit. Do not modify them.
func (m *ItemP) Affinities() *Neighbours {
	if m.side == nil {
		return nil
	}
	return m.side.fwd
}

func (m *ItemP) MarshalBinary() ([]byte, error) {
	if m.side == nil {
		return nil, fmt.Errorf("recsys: %s is not fitted", m.name)
	}
	e := newEncoder(m.name)
	e.Uvarint(uint64(m.k))
	e.Float64(m.l1)
	e.Float64(m.l2)
	e.Uvarint(uint64(m.side.nItems))
	WriteNeighbours(e, m.side.fwd)
	writeHalfLife(e, m.halfLife)
	return e.Bytes(), nil
}

func (m *ItemP) UnmarshalBinary(data []byte) error {
	d := newDecoder(data, m.name)
	k := d.Bounded(1 << 32)
	l1, l2 := d.Finite(), d.Finite()
	n := d.Bounded(1 << 32)
	fwd := ReadNeighbours(d, n)
	h := readHalfLife(d)
	if err := d.Finish(); err != nil {
		return err
	}
	if fwd.Rows() != n {
		return errCorrupt
	}
	m.k, m.l1, m.l2, m.halfLife = k, l1, l2, h
	m.side = newRankedItemSide(n, fwd)
	m.side.rank.prepare() // a decoded model is about to serve
	return nil
}

// The training times of itemknn and kunn-i: power laws fitted (least
// squares of log seconds on log positives) to the tune + fit wall seconds
// at 1M, 5M and 20M positives on 27,000 items of docs/performance.md's
// "Auto mode at 1M, 5M and 20M" and "The default models at 1M, 5M and
// 20M" tables: itemknn 10, 12, 37 and 9.4, 11.8, 31.6 s; kunn-i 8, 31, 54
// and 8.1, 26.9, 54.5 s. The catalogue size is not in them.
var (
	itemknnTime = TimeLaw{At1M: 8.38, Exponent: 0.413}
	kunnITime   = TimeLaw{At1M: 8.70, Exponent: 0.641}
)

// itemPMemory is the peak memory of itemknn and kunn-i, their neighbour
// lists at k_max counted three times, every item's list taken full: in
// the search, the validation cache's lists and the ranked indexes
// (rankIndex: 16 bytes an entry too) of the best fit and the one being
// scored; in the refit, the full cache's lists and the fit's index, then,
// those let go (trainModelsOn), the served copy's lists and index, each
// time beside the persisted bytes (12 an entry, itemPKept).
func itemPMemory(s Shape) (int64, string) {
	return 3 * ListBytes(s.Items, s.K()), fmt.Sprintf("neighbour lists of %s items × %d, in the cache and two ranked indexes", FormatCount(int64(s.Items)), s.K())
}

// itemPKept is what a job holds of a fitted itemknn or kunn-i: the served
// lists and their ranked index, and the persisted bytes (an index and a
// float64 value an entry).
func itemPKept(s Shape) int64 {
	return 2*ListBytes(s.Items, s.K()) + int64(s.Items)*int64(s.K())*12
}
