package recsys

import "context"

// Popular scores an item by its number of users c(i): the popularity
// baseline of dissertation §4.7.2.
type Popular struct {
	counts []uint32
}

func (m *Popular) Name() string { return "popular" }

func (m *Popular) Fit(ctx context.Context, x *Matrix, _ Params) error {
	m.counts = x.Popularity()
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
	return nil
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
