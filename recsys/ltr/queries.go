package ltr

import (
	"errors"
	"fmt"
	"math"
)

// Queries is a set of ranking problems, one per user: the candidates of
// query q are the rows Offsets[q] to Offsets[q+1]−1 of X, a row-major
// matrix of D float32 features per row, and Labels[r] is 1 when row r is
// relevant (a held-out positive) and 0 otherwise. A candidate's index is
// its row's position inside its query.
//
// The zero value with D set is an empty set to which Add appends queries.
type Queries struct {
	D       int
	X       []float32
	Offsets []int
	Labels  []uint8
}

// Add appends one query: x holds its candidates' features, row-major with
// q.D columns, and labels one 0/1 label per candidate.
func (q *Queries) Add(x []float32, labels []uint8) error {
	if q.D < 1 {
		return fmt.Errorf("ltr: queries have %d features, want at least 1", q.D)
	}
	if len(x) != len(labels)*q.D {
		return fmt.Errorf("ltr: query has %d feature values for %d candidates of %d features", len(x), len(labels), q.D)
	}
	if len(q.Offsets) == 0 {
		q.Offsets = append(q.Offsets, 0)
	}
	q.X = append(q.X, x...)
	q.Labels = append(q.Labels, labels...)
	q.Offsets = append(q.Offsets, len(q.Labels))
	return nil
}

// Len is the number of queries.
func (q *Queries) Len() int { return max(len(q.Offsets)-1, 0) }

// Rows is the number of rows of all the queries.
func (q *Queries) Rows() int { return len(q.Labels) }

// Query returns the rows [lo, hi) of query i.
func (q *Queries) Query(i int) (lo, hi int) { return q.Offsets[i], q.Offsets[i+1] }

// maxRows bounds the rows of a training set: row indices are int32.
const maxRows = math.MaxInt32

// Validate reports the first inconsistency: too few features, offsets that
// do not start at 0, decrease or do not end at the last row, a feature
// matrix or label slice of the wrong length, a label other than 0 or 1,
// or a feature value that is NaN or infinite.
func (q *Queries) Validate() error {
	if q.D < 1 {
		return fmt.Errorf("ltr: queries have %d features, want at least 1", q.D)
	}
	n := len(q.Labels)
	if n > maxRows {
		return fmt.Errorf("ltr: %d rows, at most %d", n, maxRows)
	}
	if len(q.X) != n*q.D {
		return fmt.Errorf("ltr: %d feature values for %d rows of %d features", len(q.X), n, q.D)
	}
	if len(q.Offsets) == 0 {
		if n != 0 {
			return errors.New("ltr: rows without offsets")
		}
		return nil
	}
	if q.Offsets[0] != 0 {
		return fmt.Errorf("ltr: the first offset is %d, want 0", q.Offsets[0])
	}
	for i := 1; i < len(q.Offsets); i++ {
		if q.Offsets[i] < q.Offsets[i-1] {
			return fmt.Errorf("ltr: offset %d (%d) is below offset %d (%d)", i, q.Offsets[i], i-1, q.Offsets[i-1])
		}
	}
	if last := q.Offsets[len(q.Offsets)-1]; last != n {
		return fmt.Errorf("ltr: the last offset is %d, want the number of rows %d", last, n)
	}
	for r, l := range q.Labels {
		if l > 1 {
			return fmt.Errorf("ltr: row %d has label %d, want 0 or 1", r, l)
		}
	}
	for k, v := range q.X {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return fmt.Errorf("ltr: row %d feature %d is %v, want a finite value", k/q.D, k%q.D, v)
		}
	}
	return nil
}
