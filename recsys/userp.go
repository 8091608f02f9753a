package recsys

import (
	"context"
	"fmt"
)

// UserP is the user-based predictor score(u, i) = aggsum(φ_user(u, i)) of
// dissertation §4.7.2 (Cor. 4.1):
//
//   - userknn: A(u, v) = cos(u, v), v ∈ KNN(u) by cosine (§4.5.3);
//   - kunn-u: A(u, v) the KUNN user affinity of Eq. (4.6), KNN(u) by that
//     same similarity.
//
// It keeps the training matrix: KNN(u) is computed from the live history at
// scoring time, because a user's history changes between trainings.
type UserP struct {
	name string
	k    int
	side *userSide
	// halfLife is the decay of past events in days (HalfLifeKey; 0 none),
	// which ScoreDecayed applies to the history.
	halfLife float64
}

// userKCandidates is the grid of the user-based model name (userknn,
// kunn-u): k capped by |U| − 1, with every setting of g.Extra[name] (a
// half-life) at each.
func userKCandidates(name string) func(g Grid, c Caps) []Params {
	return func(g Grid, c Caps) []Params { return withSettings(kCandidates(CapK(g.K, c.Users)), g.Extra[name]) }
}

func (m *UserP) Name() string { return m.name }

func (m *UserP) kunn() bool { return m.name == "kunn-u" }

func (m *UserP) Fit(ctx context.Context, x *Matrix, p Params) error {
	if m.name != "userknn" && m.name != "kunn-u" {
		return fmt.Errorf("recsys: unknown user model %q", m.name)
	}
	p = p.WithDefaults()
	h, err := halfLifeOf(p, 0)
	if err != nil {
		return err
	}
	m.k, m.halfLife = p.K, h
	m.side = newUserSide(x, p.K, m.kunn()).withCache(p.Cache)
	return ctx.Err()
}

func (m *UserP) Score(history []uint32, scores []float64) { m.ScoreUser(-1, history, scores) }

func (m *UserP) ScoreUser(self int, history []uint32, scores []float64) {
	FillScores(scores, m.side.x.nItems, func(buf []float64) { m.side.accumulate(self, history, buf, nil) })
}

// HalfLife is the decay of past events in days (0: none).
func (m *UserP) HalfLife() float64 { return m.halfLife }

// ScoreWeighted is Score with history item k counting weights[k]: the
// live user's row is the weighted vector w in A(u, v), KNN(u) included
// (userSide.searchWeighted).
func (m *UserP) ScoreWeighted(history []uint32, weights []float64, scores []float64) {
	m.ScoreUserWeighted(-1, history, weights, scores)
}

// ScoreUserWeighted is ScoreWeighted for a user who is row self of the
// training matrix (−1 for none), left out of KNN(u) as ScoreUser leaves
// it out. It never reads or fills the memo of unweighted neighbours.
func (m *UserP) ScoreUserWeighted(self int, history []uint32, weights []float64, scores []float64) {
	FillScores(scores, m.side.x.nItems, func(buf []float64) { m.side.accumulateWeighted(self, history, weights, buf, nil) })
}

// Neighbours returns KNN(u) with A(u, v) for a live history (self as in
// ScoreUser), best first.
func (m *UserP) Neighbours(self int, history []uint32) []Neighbour {
	sc := m.side.pool.Get().(*userScratch)
	defer m.side.pool.Put(sc)
	return append([]Neighbour(nil), m.side.neighbours(self, history, sc)...)
}

func (m *UserP) MarshalBinary() ([]byte, error) {
	if m.side == nil {
		return nil, fmt.Errorf("recsys: %s is not fitted", m.name)
	}
	e := newEncoder(m.name)
	e.Uvarint(uint64(m.k))
	WriteMatrix(e, m.side.x)
	writeHalfLife(e, m.halfLife)
	return e.Bytes(), nil
}

func (m *UserP) UnmarshalBinary(data []byte) error {
	d := newDecoder(data, m.name)
	k := d.Bounded(1 << 32)
	x := ReadMatrix(d)
	h := readHalfLife(d)
	if err := d.Finish(); err != nil {
		return err
	}
	m.k, m.halfLife = k, h
	m.side = newUserSide(x, k, m.kunn())
	return nil
}

// The training times of userknn and kunn-u (fitted as itemknnTime's, the
// same tables): userknn 8, 12, 26 and 8.1, 12.0, 24.6 s; kunn-u 9, 11, 20
// and 7.9, 11.2, 20.3 s at 1M, 5M and 20M positives.
var (
	userknnTime = TimeLaw{At1M: 7.53, Exponent: 0.379}
	kunnUTime   = TimeLaw{At1M: 7.95, Exponent: 0.288}
)

// userPMemory is the memory of userknn and kunn-u: the memo of KNN(u) at
// k_max of the users that validation scores (userLists), twice for the
// split's and the refit's caches; the model's user side holds the matrix
// alone and searches KNN(u) at scoring time.
func userPMemory(s Shape) (int64, string) {
	k := s.UserK()
	return 2 * ListBytes(s.Validated(), k), fmt.Sprintf("user neighbour lists of %s validation users × %d", FormatCount(int64(s.Validated())), k)
}
