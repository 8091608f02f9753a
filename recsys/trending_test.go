package recsys

import (
	"context"
	"math"
	"slices"
	"testing"
)

// timedMatrix builds a timed matrix of the pairs with their days, failing
// the test on an error.
func timedMatrix(tb testing.TB, nUsers, nItems int, pairs []Pair, days []int32) *Matrix {
	tb.Helper()
	x, err := NewTimedMatrix(nUsers, nItems, pairs, days)
	if err != nil {
		tb.Fatal(err)
	}
	return x
}

func fitTime(tb testing.TB, m Model, x *Matrix, p Params) []float64 {
	tb.Helper()
	if err := m.Fit(context.Background(), x, p); err != nil {
		tb.Fatal(err)
	}
	scores := make([]float64, x.Items())
	m.Score(nil, scores)
	return scores
}

func halfLife(h float64) Params { return Params{Extra: map[string]float64{HalfLifeKey: h}} }

func TestDecayWeight(t *testing.T) {
	for _, tc := range []struct{ age, h, want float64 }{
		{0, 10, 1}, {10, 10, 0.5}, {20, 10, 0.25}, {5, 10, math.Sqrt(0.5)}, {-3, 10, 1},
		{10, 0, 1}, {1e6, math.Inf(1), 1},
	} {
		if got := DecayWeight(tc.age, tc.h); math.Abs(got-tc.want) > 1e-15 {
			t.Errorf("DecayWeight(%v, %v) = %v, want %v", tc.age, tc.h, got, tc.want)
		}
	}
}

// Two items, positives on days 0 and 10: with a half-life of 10 days the
// day-0 positive weighs ½ and the day-10 one 1 (today is day 10).
func TestTrending_Fit_handComputed(t *testing.T) {
	pairs := []Pair{{0, 0}, {1, 1}, {2, 0}, {2, 1}}
	days := []int32{0, 10, 10, 0}
	x := timedMatrix(t, 3, 3, pairs, days)
	for _, tc := range []struct {
		h    float64
		want []float64
	}{
		{10, []float64{1.5, 1.5, 0}},
		{5, []float64{1.25, 1.25, 0}},
	} {
		got := fitTime(t, &Trending{}, x, halfLife(tc.h))
		if !slices.Equal(got, tc.want) {
			t.Errorf("half-life %v: scores %v, want %v", tc.h, got, tc.want)
		}
	}
	// Item 0: days 0, 10; item 1: days 10, 10, 3 → with h = 10,
	// 0.5 + 1 and 1 + 1 + 2^(−0.7).
	x = timedMatrix(t, 4, 2, []Pair{{0, 0}, {1, 0}, {1, 1}, {2, 1}, {3, 1}}, []int32{0, 10, 10, 10, 3})
	got := fitTime(t, &Trending{}, x, halfLife(10))
	want := []float64{1.5, 2 + math.Pow(2, -0.7)}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Fatalf("scores %v, want %v", got, want)
		}
	}
	if top := TopN(got, x.Popularity(), nil, 2); !slices.Equal(top, []uint32{1, 0}) {
		t.Errorf("trending order %v, want [1 0]", top)
	}
}

// With no decay (half-life 0 or +Inf) trending is popularity: the same
// scores as popular's counts, on a random timed matrix.
func TestTrending_noDecayIsPopular(t *testing.T) {
	x0, _ := randomMatrix(t, 5, 30, 20, 0.3)
	pairs := x0.Pairs()
	days := make([]int32, len(pairs))
	for k := range days {
		days[k] = int32(k * 7 % 365)
	}
	x := timedMatrix(t, 30, 20, pairs, days)
	pop := fitTime(t, &Popular{}, x, Params{})
	for _, h := range []float64{0, math.Inf(1)} {
		if got := fitTime(t, &Trending{}, x, halfLife(h)); !slices.Equal(got, pop) {
			t.Errorf("half-life %v: scores %v, popular %v", h, got, pop)
		}
	}
	// A very long half-life approaches it.
	got := fitTime(t, &Trending{}, x, halfLife(1e9))
	for i := range got {
		if math.Abs(got[i]-pop[i]) > 1e-6*pop[i] {
			t.Fatalf("half-life 1e9: item %d scores %v, popular %v", i, got[i], pop[i])
		}
	}
	// On an untimed matrix too.
	if got := fitTime(t, &Trending{}, x0, halfLife(3)); !slices.Equal(got, pop) {
		t.Errorf("untimed: scores %v, popular %v", got, pop)
	}
}

func TestTrending_Fit_badHalfLife(t *testing.T) {
	x := timedMatrix(t, 1, 1, []Pair{{0, 0}}, []int32{4})
	for _, h := range []float64{-1, math.NaN()} {
		if err := (&Trending{}).Fit(context.Background(), x, halfLife(h)); err == nil {
			t.Errorf("half-life %v: no error", h)
		}
	}
}

// Latest ranks by the day of each item's earliest positive, newest first;
// items first seen the same day tie and go by popularity, then index; an
// item without a positive comes last.
func TestLatest_order(t *testing.T) {
	// Item 0: days 2, 9 → 2. Item 1: 5. Item 2: 5, 6 → 5, popularity 2.
	// Item 3: 7. Item 4: none. Item 5: 5.
	pairs := []Pair{{0, 0}, {1, 0}, {0, 1}, {1, 2}, {2, 2}, {2, 3}, {3, 5}}
	days := []int32{9, 2, 5, 6, 5, 7, 5}
	x := timedMatrix(t, 4, 6, pairs, days)
	scores := fitTime(t, &Latest{}, x, Params{})
	if want := []float64{1, 4, 4, 6, 0, 4}; !slices.Equal(scores, want) {
		t.Fatalf("scores %v, want %v", scores, want)
	}
	if got, want := TopN(scores, x.Popularity(), nil, 6), []uint32{3, 2, 1, 5, 0, 4}; !slices.Equal(got, want) {
		t.Errorf("latest order %v, want %v", got, want)
	}
}

func TestTimeModels_MarshalBinary_roundTrip(t *testing.T) {
	x := timedMatrix(t, 3, 4, []Pair{{0, 0}, {1, 1}, {2, 0}, {2, 3}}, []int32{20000, 20010, 20003, 20007})
	for _, m := range []Model{&Trending{}, &Latest{}} {
		fitTime(t, m, x, halfLife(7))
		data, _ := roundTrip(t, m.Name(), m, x)
		if _, err := Load(data[:len(data)-1]); err == nil {
			t.Errorf("%s: a truncated blob loaded", m.Name())
		}
	}
	if got := ParamsOf(&Trending{halfLife: 7}); got[HalfLifeKey] != 7 {
		t.Errorf("trending params %v", got)
	}
}

func TestNewTimedMatrix(t *testing.T) {
	// Out of order, with the pair (0, 1) twice: it keeps the earlier day.
	x := timedMatrix(t, 2, 3, []Pair{{1, 2}, {0, 1}, {0, 0}, {0, 1}}, []int32{8, 3, 4, 6})
	if !x.Timed() || !slices.Equal(x.RowDays(0), []int32{4, 3}) || !slices.Equal(x.RowDays(1), []int32{8}) || x.LastDay() != 8 {
		t.Fatalf("days %v %v, last %d", x.RowDays(0), x.RowDays(1), x.LastDay())
	}
	// In (user, item) order: the fast path gives the same days.
	y := timedMatrix(t, 2, 3, []Pair{{0, 0}, {0, 1}, {1, 2}}, []int32{4, 3, 8})
	if !slices.Equal(y.days, x.days) {
		t.Errorf("sorted input: days %v, want %v", y.days, x.days)
	}
	if _, err := NewTimedMatrix(2, 3, []Pair{{0, 0}}, nil); err == nil {
		t.Error("no error for missing days")
	}
	plain, _ := NewMatrix(2, 3, []Pair{{0, 1}, {1, 2}})
	if plain.Timed() || plain.RowDays(0) != nil {
		t.Error("an untimed matrix has days")
	}
	sub, err := plain.WithDaysOf(x)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(sub.RowDays(0), []int32{3}) || !slices.Equal(sub.RowDays(1), []int32{8}) || plain.Timed() {
		t.Errorf("WithDaysOf: %v %v", sub.RowDays(0), sub.RowDays(1))
	}
	other, _ := NewMatrix(2, 3, []Pair{{0, 2}})
	if _, err := other.WithDaysOf(x); err == nil {
		t.Error("WithDaysOf: no error for a pair without a day")
	}
	if same, _ := other.WithDaysOf(plain); same != other {
		t.Error("WithDaysOf an untimed matrix is not the matrix itself")
	}
	for _, tc := range []struct {
		sec  int64
		want int32
	}{{0, 0}, {86399, 0}, {86400, 1}, {-1, -1}, {-86400, -1}, {-86401, -2}} {
		if got := DayOfUnix(tc.sec); got != tc.want {
			t.Errorf("DayOfUnix(%d) = %d, want %d", tc.sec, got, tc.want)
		}
	}
}
