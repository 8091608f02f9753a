package retrieval

import (
	"math"
	"testing"
)

// TestColdThreshold_handComputed: with two items X (0) and Y (1) the
// standard error over items is √(2·Σ_i (E_i − E/2)²) = |E_X − E_Y|.
func TestColdThreshold_handComputed(t *testing.T) {
	pair := func(u, i int, d float64, c bool) ColdPair {
		return ColdPair{User: u, Item: i, Distance: d, Consumed: c}
	}
	// Users A, B, C, D (0–3); A and C consumed X, B and D consumed Y: N =
	// 4, n_u = 1, n_i = 2, so every pair expects 1·2/4 = 0.5, and a
	// consumed pair adds +0.5 to E, another −0.5.
	abcd := func(d ...float64) []ColdPair {
		// d: the distances of AX CX BY AY DY BX CY DX.
		return []ColdPair{pair(0, 0, d[0], true), pair(2, 0, d[1], true), pair(1, 1, d[2], true), pair(0, 1, d[3], false),
			pair(3, 1, d[4], true), pair(1, 0, d[5], false), pair(2, 1, d[6], false), pair(3, 0, d[7], false)}
	}
	for _, tc := range []struct {
		name   string
		pairs  []ColdPair
		grid   int
		t, exc float64
	}{
		// Grid 8 puts a candidate at each of the 7 nearest pairs. (E_X,
		// E_Y) at t = 0…6: (.5,0) (1,0) (1,.5) (1,0) (1,.5) (.5,.5) (.5,0),
		// E = .5 1 1.5 1 1.5 1 .5. The best is t = 2 (the first 1.5) with
		// SE .5; the largest candidate with E ≥ 1.5 − .5 is t = 5: E/N =
		// 1/4.
		{"one standard error", abcd(0, 1, 2, 3, 4, 5, 6, 7), 8, 5, 0.25},
		// BX ties DY at 4: the threshold 4 takes both (E = 1, not the 1.5
		// of DY alone), and it is still the largest within one SE of t = 2.
		{"ties", abcd(0, 1, 2, 3, 4, 4, 6, 7), 8, 4, 0.25},
		// Consumed pairs nearest: E = .5 1 1.5 2 (SE 0 at t = 3, where
		// E_X = E_Y = 1) 1.5 1 .5: t = 3, 2/4.
		{"content informative", abcd(0, 1, 2, 4, 3, 5, 6, 7), 8, 3, 0.5},
		// Consumed pairs farthest: every E < 0, no threshold.
		{"content misleading", abcd(7, 6, 5, 4, 3, 2, 1, 0), 8, math.Inf(1), 0},
		// In distance order AX+ AY− BX− CX+ CY− BY+ DY+ DX−: E = .5 0 −.5 0
		// −.5 0 .5, the best E(0) = .5 (E_X = .5, E_Y = 0) no more than its
		// standard error .5: no threshold.
		{"not significant", abcd(0, 3, 5, 1, 6, 2, 4, 7), 8, math.Inf(1), 0},
		// Grid 2 has one candidate, the pair ceil(8/2)−1 = 3 in distance
		// order (DY at 3, E = 2, SE 0).
		{"grid 2", abcd(0, 1, 2, 4, 3, 5, 6, 7), 2, 3, 0.5},
		{"nothing consumed", []ColdPair{pair(0, 0, 0, false), pair(0, 1, 1, false)}, 4, math.Inf(1), 0},
		{"one item", []ColdPair{pair(0, 0, 0, true), pair(1, 0, 1, false)}, 2, math.Inf(1), 0},
		{"no pairs", nil, 4, math.Inf(1), 0},
		{"no grid", abcd(0, 1, 2, 4, 3, 5, 6, 7), 1, math.Inf(1), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, exc := ColdThreshold(tc.pairs, tc.grid)
			if got != tc.t || math.Abs(exc-tc.exc) > 1e-12 {
				t.Errorf("ColdThreshold = %v, %v; want %v, %v", got, exc, tc.t, tc.exc)
			}
		})
	}
	t.Run("three items, unequal margins", func(t *testing.T) {
		// A consumed X and Y, B consumed Z: N = 3, e = 2/3 for A's pairs
		// and 1/3 for B's. In distance order AX +1/3, AY +1/3, BZ +2/3,
		// BX −1/3, AZ −2/3, BY −1/3. (E_X, E_Y, E_Z) at the candidates
		// t = 0…4 of grid 6: (1/3,0,0) (1/3,1/3,0) (1/3,1/3,2/3)
		// (0,1/3,2/3) (0,1/3,0); E = 1/3 2/3 4/3 1 1/3. At t = 2 the
		// deviations from E/3 = 4/9 are (−1/9, −1/9, 2/9): SE =
		// √(3/2·6/81) = 1/3, so the floor is 1 and t = 3 (E = 1) is the
		// largest candidate on it: E/N = 1/3.
		pairs := []ColdPair{pair(0, 0, 0, true), pair(0, 1, 1, true), pair(1, 2, 2, true),
			pair(1, 0, 3, false), pair(0, 2, 4, false), pair(1, 1, 5, false)}
		if got, exc := ColdThreshold(pairs, 6); got != 3 || math.Abs(exc-1.0/3) > 1e-12 {
			t.Errorf("ColdThreshold = %v, %v; want 3, 1/3", got, exc)
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
