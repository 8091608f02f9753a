package recsys

import (
	"cmp"
	"context"
	"slices"
)

// Popular scores an item by its number of users c(i): the popularity
// baseline of dissertation §4.7.2.
type Popular struct {
	counts []uint32
	// order holds the items by decreasing count, then index: RankTop
	// walks it instead of the catalogue.
	order []uint32
}

// sortItems sets order from counts.
func (m *Popular) sortItems() {
	m.order = make([]uint32, len(m.counts))
	for i := range m.order {
		m.order[i] = uint32(i)
	}
	slices.SortFunc(m.order, func(a, b uint32) int {
		if c := cmp.Compare(m.counts[b], m.counts[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
}

func (m *Popular) Name() string { return "popular" }

func (m *Popular) Fit(ctx context.Context, x *Matrix, _ Params) error {
	m.counts = x.Popularity()
	m.sortItems()
	return ctx.Err()
}

func (m *Popular) Score(_ []uint32, scores []float64) {
	clearScores(scores)
	for i := range min(len(scores), len(m.counts)) {
		scores[i] = float64(m.counts[i])
	}
}

func (m *Popular) ScoreUser(_ int, history []uint32, scores []float64) { m.Score(history, scores) }

func (m *Popular) MarshalBinary() ([]byte, error) {
	e := newEncoder(m.Name())
	e.Uvarint(uint64(len(m.counts)))
	e.Uint32s(m.counts)
	return e.Bytes(), nil
}

func (m *Popular) UnmarshalBinary(data []byte) error {
	d := newDecoder(data, m.Name())
	counts := d.Uint32s(d.Count(4))
	if err := d.Finish(); err != nil {
		return err
	}
	m.counts = counts
	m.sortItems()
	return nil
}

// RankTop takes the items in decreasing order of count, each group of
// equal counts ordered by the tie order (TopN's: popularity, then index),
// and the items of count 0 and past the model's catalogue last: the
// answer of scoring every item, found by reading the groups it reaches.
func (m *Popular) RankTop(_ []uint32, popularity []uint32, skip func(uint32) bool, n int, scores []float64) []uint32 {
	if n <= 0 {
		return nil
	}
	var out []uint32
	// take adds to out the best of items (those past the catalogue left
	// out) and of the items from..len(scores)−1, all of the given score.
	take := func(items []uint32, from int, score float64) {
		q := topHeap{t: tieOrder{pop: popularity}, scores: scores, n: n - len(out)}
		push := func(i uint32) {
			scores[i] = score
			if q.enters(i) && !skip(i) {
				q.push(i)
			}
		}
		for _, i := range items {
			if int(i) < len(scores) {
				push(i)
			}
		}
		for i := from; i < len(scores); i++ {
			push(uint32(i))
		}
		out = append(out, q.sorted()...)
	}
	at := 0
	for at < len(m.order) && len(out) < n {
		c := m.counts[m.order[at]]
		if c == 0 {
			break
		}
		end := at
		for end < len(m.order) && m.counts[m.order[end]] == c {
			end++
		}
		take(m.order[at:end], len(scores), float64(c))
		at = end
	}
	if len(out) < n {
		take(m.order[at:], len(m.counts), 0) // count 0, and past the model's catalogue
	}
	return out
}

// popularTime is popular's training time: 1 s at 1M, 5M and 20M positives
// in the auto runs and 0.8 s in the default-model runs
// (docs/performance.md, "Auto mode at 1M, 5M and 20M" and "The default
// models at 1M, 5M and 20M", 27,000 items): the validation pass, flat.
var popularTime = TimeLaw{At1M: 0.894, Exponent: 0}

// popularMemory is one count per item.
func popularMemory(s Shape) (int64, string) {
	return int64(s.Items) * 8, "one count per item"
}
