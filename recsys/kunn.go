package recsys

import (
	"context"
	"fmt"
	"math"
)

// KUNN is the KUNN predictor of Verstrepen and Goethals (2014) in the form
// of dissertation Eq. (4.4), equal to Eq. (4.3) by Theorem 4.4:
//
//	score(u, i) = aggsum(φ_item(u, i))/√c(u) + aggsum(φ_user(u, i))/√c(i)
//
// with the affinities of Eqs. (4.5)–(4.6) and KNN(i), KNN(u) taken by those
// same similarities (sim = sim_KUNN), one k for both sides. The user side
// is computed from the live history.
type KUNN struct {
	k         int
	items     *itemSide
	users     *userSide
	itemScale []float64 // 1/√c(i)
	// halfLife is the decay of past events in days (HalfLifeKey; 0 none),
	// which ScoreDecayed applies to the history.
	halfLife float64
}

// kunnCandidates is KUNN's grid: k capped by the longer of the item and
// user neighbour lists, as KUNN uses both, with every setting of
// g.Extra["kunn"] (a half-life) at each.
func kunnCandidates(g Grid, c Caps) []Params {
	return withSettings(kCandidates(CapK(g.K, max(c.Items, c.Users))), g.Extra["kunn"])
}

func (m *KUNN) Name() string { return "kunn" }

func (m *KUNN) Fit(ctx context.Context, x *Matrix, p Params) error {
	p = p.WithDefaults()
	h, err := halfLifeOf(p, 0)
	if err != nil {
		return err
	}
	nb, err := ItemNeighbours(ctx, x, SimKUNN, p)
	if err != nil {
		return err
	}
	m.halfLife = h
	m.set(p.K, x, nb)
	m.users.withCache(p.Cache)
	return nil
}

func (m *KUNN) set(k int, x *Matrix, nb *Neighbours) {
	m.k = k
	m.items = newItemSide(x.Items(), nb)
	m.users = newUserSide(x, k, true)
	m.itemScale = kunnWeights(x.byItem)
}

func (m *KUNN) Score(history []uint32, scores []float64) { m.ScoreUser(-1, history, scores) }

func (m *KUNN) ScoreUser(self int, history []uint32, scores []float64) {
	FillScores(scores, m.items.nItems, func(buf []float64) {
		cu := knownCount(history, m.items.nItems)
		if cu == 0 {
			return
		}
		m.items.accumulate(history, buf, 1/math.Sqrt(float64(cu)))
		m.users.accumulate(self, history, buf, m.itemScale)
	})
}

// HalfLife is the decay of past events in days (0: none).
func (m *KUNN) HalfLife() float64 { return m.halfLife }

// ScoreWeighted is Score with history item k counting weights[k].
func (m *KUNN) ScoreWeighted(history []uint32, weights []float64, scores []float64) {
	m.ScoreUserWeighted(-1, history, weights, scores)
}

// ScoreUserWeighted is ScoreUser with the user's row weighted: x_uj =
// weights[k] for history item k, so c(u) = Σ_j x_uj in the item part,
// and the user part's KNN(u) and A(u, v) are those of the weighted row
// (userSide.searchWeighted, as kunn-u's). Weights of 1 give ScoreUser.
func (m *KUNN) ScoreUserWeighted(self int, history []uint32, weights []float64, scores []float64) {
	FillScores(scores, m.items.nItems, func(buf []float64) {
		cu, prev := 0.0, -1
		for k, j := range history {
			if int(j) < m.items.nItems && int(j) != prev {
				cu += weights[k]
				prev = int(j)
			}
		}
		if cu <= 0 {
			return
		}
		scale := 1 / math.Sqrt(cu)
		for k := range history {
			m.items.accumulate(history[k:k+1:k+1], buf, weights[k]*scale)
		}
		m.users.accumulateWeighted(self, history, weights, buf, m.itemScale)
	})
}

// Similar returns KNN(i) with the KUNN item affinity, best first.
func (m *KUNN) Similar(item uint32) []Neighbour {
	if int(item) >= m.items.nItems {
		return nil
	}
	return m.items.fwd.Row(int(item))
}

func (m *KUNN) MarshalBinary() ([]byte, error) {
	if m.items == nil {
		return nil, fmt.Errorf("recsys: kunn is not fitted")
	}
	e := newEncoder(m.Name())
	e.Uvarint(uint64(m.k))
	WriteMatrix(e, m.users.x)
	WriteNeighbours(e, m.items.fwd)
	writeHalfLife(e, m.halfLife)
	return e.Bytes(), nil
}

func (m *KUNN) UnmarshalBinary(data []byte) error {
	d := newDecoder(data, m.Name())
	k := d.Bounded(1 << 32)
	x := ReadMatrix(d)
	if d.Err() != nil {
		return d.Err()
	}
	nb := ReadNeighbours(d, x.Items())
	h := readHalfLife(d)
	if err := d.Finish(); err != nil {
		return err
	}
	if nb.Rows() != x.Items() {
		return errCorrupt
	}
	m.halfLife = h
	m.set(k, x, nb)
	return nil
}

// kunnTime is kunn's training time (fitted as itemknnTime's, the same
// tables): 24, 36, 52 and 23.5, 34.6, 46.5 s at 1M, 5M and 20M positives.
var kunnTime = TimeLaw{At1M: 23.8, Exponent: 0.243}

// kunnMemory is kunn's: the item side's KUNN lists as itemknn's
// (itemPMemory) and the user side's as userknn's (userPMemory).
func kunnMemory(s Shape) (int64, string) {
	items, _ := itemPMemory(s)
	users, _ := userPMemory(s)
	return items + users, fmt.Sprintf("neighbour lists of %s items and %s users × %d", FormatCount(int64(s.Items)), FormatCount(int64(s.Users)), max(s.K(), s.UserK()))
}
