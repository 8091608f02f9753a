package retrieval

import (
	"math"
	"testing"
)

// TestColdThreshold_handComputed: users A (0) and B (1), held-out items X
// (0) and Y (1); A consumed X, B consumed Y, so N = 2, every margin is 1
// and every pair expects 1·1/2 = 0.5: a consumed pair adds +0.5, another
// −0.5.
func TestColdThreshold_handComputed(t *testing.T) {
	pair := func(u, i int, d float64, c bool) ColdPair {
		return ColdPair{User: u, Item: i, Distance: d, Consumed: c}
	}
	for _, tc := range []struct {
		name   string
		pairs  []ColdPair
		grid   int
		t, exc float64
	}{
		// Distances 0 1 2 3 for AX BY AY BX: E = 0.5, 1, 0.5, (0 at +Inf);
		// the candidates of grid 4 are 0, 1, 2: t = 1, 1/N = 0.5.
		{"content informative", []ColdPair{pair(0, 0, 0, true), pair(1, 1, 1, true), pair(0, 1, 2, false), pair(1, 0, 3, false)}, 4, 1, 0.5},
		// The consumed pairs are the far ones: E = −0.5, −1, −0.5: none
		// positive, so no threshold.
		{"content misleading", []ColdPair{pair(0, 1, 0, false), pair(1, 0, 1, false), pair(0, 0, 2, true), pair(1, 1, 3, true)}, 4, math.Inf(1), 0},
		// BY and AY tie at 1: the threshold 1 takes both (E = 0.5 + 0.5 −
		// 0.5), the same as the threshold 0 (AX alone), and the tie goes to
		// the larger threshold: t = 1, 0.5/2.
		{"ties", []ColdPair{pair(0, 0, 0, true), pair(1, 1, 1, true), pair(0, 1, 1, false), pair(1, 0, 3, false)}, 4, 1, 0.25},
		// Grid 2 has one candidate, the median pair (index ceil(4/2)−1 =
		// 1, distance 1): E = 1.
		{"grid 2", []ColdPair{pair(0, 0, 0, true), pair(1, 1, 1, true), pair(0, 1, 2, false), pair(1, 0, 3, false)}, 2, 1, 0.5},
		{"nothing consumed", []ColdPair{pair(0, 0, 0, false)}, 4, math.Inf(1), 0},
		{"no pairs", nil, 4, math.Inf(1), 0},
		{"no grid", []ColdPair{pair(0, 0, 0, true), pair(1, 1, 1, false)}, 1, math.Inf(1), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, exc := ColdThreshold(tc.pairs, tc.grid)
			if got != tc.t || math.Abs(exc-tc.exc) > 1e-12 {
				t.Errorf("ColdThreshold = %v, %v; want %v, %v", got, exc, tc.t, tc.exc)
			}
		})
	}
	t.Run("unequal margins", func(t *testing.T) {
		// A consumed X; B consumed X and Y: N = 3, n_A = 1, n_B = 2, n_X =
		// 2, n_Y = 1. Expected AX 2/3, AY 1/3, BX 4/3, BY 2/3; residuals in
		// distance order AX +1/3, AY −1/3, BX −1/3, BY +1/3, so E = 1/3, 0,
		// −1/3 at the candidates 0, 1, 2: t = 0, (1/3)/3.
		pairs := []ColdPair{pair(0, 0, 0, true), pair(0, 1, 1, false), pair(1, 0, 2, true), pair(1, 1, 3, true)}
		if got, exc := ColdThreshold(pairs, 4); got != 0 || math.Abs(exc-1.0/9) > 1e-12 {
			t.Errorf("ColdThreshold = %v, %v; want 0, %v", got, exc, 1.0/9)
		}
	})
}

// TestSpread_handComputed: the mean of ‖p_i − p_j‖² over all ordered pairs,
// the pair of a vector with itself included.
func TestSpread_handComputed(t *testing.T) {
	for _, tc := range []struct {
		vecs [][]float64
		want float64
	}{
		{[][]float64{{0, 0}, {2, 0}}, 2},                // (0 + 4 + 4 + 0)/4
		{[][]float64{{0, 0}, {2, 0}, {0, 2}}, 32.0 / 9}, // (4+4+4+4+8+8)/9
		{[][]float64{{1, 1}}, 0},
		{nil, 0},
	} {
		if got := Spread(tc.vecs); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("Spread(%v) = %v, want %v", tc.vecs, got, tc.want)
		}
	}
}
