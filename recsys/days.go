package recsys

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// A day number counts whole UTC days since 1970-01-01: the granularity at
// which the time-aware models (trending, latest, the decay of the
// neighbourhood and linear models) read when a pair became positive.

// DayOfUnix is the day number of a Unix time in seconds.
func DayOfUnix(sec int64) int32 {
	d := sec / 86400
	if sec < 0 && sec%86400 != 0 {
		d--
	}
	return int32(d)
}

// NewTimedMatrix is NewMatrix with the day number of each pair: days[k]
// is the day pairs[k] became positive. A pair listed more than once keeps
// its earliest day. The days ride along the rows (RowDays); every model
// that does not read them sees the same matrix as NewMatrix's.
func NewTimedMatrix(nUsers, nItems int, pairs []Pair, days []int32) (*Matrix, error) {
	if len(days) != len(pairs) {
		return nil, fmt.Errorf("recsys: %d days for %d pairs", len(days), len(pairs))
	}
	x, err := NewMatrix(nUsers, nItems, pairs)
	if err != nil {
		return nil, err
	}
	y := *x
	// Distinct pairs in (user, item) order, as a store's snapshot lists
	// them, are the matrix's entries in order.
	if x.NNZ() == len(pairs) && slices.IsSortedFunc(pairs, func(a, b Pair) int {
		return cmp.Or(cmp.Compare(a.User, b.User), cmp.Compare(a.Item, b.Item))
	}) {
		y.days = slices.Clone(days)
		return &y, nil
	}
	out := make([]int32, x.NNZ())
	for k := range out {
		out[k] = math.MaxInt32
	}
	for k, p := range pairs {
		row := x.Row(int(p.User))
		j, _ := slices.BinarySearch(row, p.Item)
		at := x.byUser.ptr[p.User] + j
		out[at] = min(out[at], days[k])
	}
	y.days = out
	return &y, nil
}

// Timed reports whether x carries the day of every pair.
func (x *Matrix) Timed() bool { return x.days != nil }

// RowDays returns the day of each pair of Row(u), in the same order; nil
// when x is not timed. Do not modify it.
func (x *Matrix) RowDays(u int) []int32 {
	if x.days == nil {
		return nil
	}
	return x.days[x.byUser.ptr[u]:x.byUser.ptr[u+1]]
}

// LastDay is the latest day of any pair, the "today" of the time-aware
// models: 0 when x is not timed or empty.
func (x *Matrix) LastDay() int32 {
	if len(x.days) == 0 {
		return 0
	}
	return slices.Max(x.days)
}

// WithDaysOf is x with the days its pairs have in src, a timed matrix
// holding every pair of x (the full data a split's training matrix was
// drawn from); x itself when src is not timed. It fails on a pair of x
// that src lacks.
func (x *Matrix) WithDaysOf(src *Matrix) (*Matrix, error) {
	if !src.Timed() {
		return x, nil
	}
	if src.nUsers < x.nUsers {
		return nil, fmt.Errorf("recsys: days of %d users for a matrix of %d", src.nUsers, x.nUsers)
	}
	out := make([]int32, x.NNZ())
	for u := range x.nUsers {
		row, srow, sdays := x.Row(u), src.Row(u), src.RowDays(u)
		at, j := x.byUser.ptr[u], 0
		for _, i := range row {
			for j < len(srow) && srow[j] < i {
				j++
			}
			if j == len(srow) || srow[j] != i {
				return nil, fmt.Errorf("recsys: pair (%d, %d) has no day", u, i)
			}
			out[at] = sdays[j]
			at++
		}
	}
	y := *x
	y.days = out
	return &y, nil
}

// DecayWeight is the weight of an event age days old under exponential
// decay with the given half-life in days, exp(−ln2 · age/halfLife): 1 at
// age 0, ½ at one half-life. A half-life ≤ 0 or +Inf means no decay
// (weight 1), and an age below 0 counts as 0.
func DecayWeight(age, halfLife float64) float64 {
	if halfLife <= 0 || math.IsInf(halfLife, 1) {
		return 1
	}
	return math.Exp(-math.Ln2 * max(age, 0) / halfLife)
}
