package rank

import (
	"math"
	"slices"
	"testing"
)

func TestApAndPrecision_handComputed(t *testing.T) {
	rel := []bool{false, true, false, true, true}
	// AP = (1/2 + 2/4 + 3/5) / 3 = 0.5333…
	if got, want := AveragePrecision(rel), (0.5+0.5+0.6)/3; math.Abs(got-want) > 1e-12 {
		t.Errorf("AP = %v, want %v", got, want)
	}
	if got := PrecisionAt(rel, 4); got != 0.5 {
		t.Errorf("P@4 = %v, want 0.5", got)
	}
	if got := PrecisionAt(rel, 10); got != 0.3 {
		t.Errorf("P@10 over 5 items = %v, want 0.3", got)
	}
	if AveragePrecision([]bool{false, false}) != 0 {
		t.Error("AP without relevant items must be 0")
	}
}

// near reports whether got is want to 1e-12.
func near(got, want float64) bool { return math.Abs(got-want) <= 1e-12 }

// D(i) of seed 002 §4: 1 at i = 1, 1/log2(i) for 2 ≤ i ≤ k, 0 after.
func TestDiscount_handComputed(t *testing.T) {
	for _, tc := range []struct {
		i, k int
		want float64
	}{
		{1, 3, 1},                   // D(1) = 1
		{2, 3, 1},                   // D(2) = 1/log2(2) = 1
		{3, 3, 0.6309297535714575},  // D(3) = 1/log2(3) = 0.6309297535714575
		{4, 8, 0.5},                 // D(4) = 1/log2(4) = 1/2
		{5, 8, 0.43067655807339306}, // D(5) = 1/log2(5) = 0.43067655807339306
		{8, 8, 1.0 / 3},             // D(8) = 1/log2(8) = 1/3
		{4, 3, 0},                   // i > k
		{0, 3, 0},                   // positions count from 1
		{1, 0, 0},                   // k = 0 keeps nothing
	} {
		if got := Discount(tc.i, tc.k); !near(got, tc.want) {
			t.Errorf("D(%d) with k = %d is %.17g, want %.17g", tc.i, tc.k, got, tc.want)
		}
	}
}

// The ideal ranking's DCG, Σ_{i=1}^{min(k,|X⁺q|)} D(i) (seed 002 §4, NDCG).
func TestIdealDCG_handComputed(t *testing.T) {
	for _, tc := range []struct {
		nPos, k int
		want    float64
	}{
		{2, 5, 2},                  // D(1) + D(2) = 1 + 1
		{3, 3, 2.6309297535714575}, // 1 + 1 + 1/log2(3)
		{5, 4, 3.1309297535714575}, // min(5, 4) = 4: 1 + 1 + 1/log2(3) + 1/log2(4)
		{0, 3, 0},                  // nothing relevant
	} {
		if got := IdealDCG(tc.nPos, tc.k); !near(got, tc.want) {
			t.Errorf("IdealDCG(%d, %d) = %.17g, want %.17g", tc.nPos, tc.k, got, tc.want)
		}
	}
}

// NDCG(q,y;k) with binary relevance (seed 002 §4), normalised by the ideal
// ranking's DCG over min(k, |X⁺q|) positions.
func TestNDCGAt_handComputed(t *testing.T) {
	for _, tc := range []struct {
		name string
		rel  []bool
		k    int
		want float64
	}{
		{
			// DCG = D(2) + D(4) = 1/log2(2) + 1/log2(4) = 1.5 (position 5 is past
			// k); ideal = D(1) + D(2) + D(3) = 2 + 1/log2(3) = 2.6309297535714575;
			// NDCG = 1.5 / 2.6309297535714575 = 0.5701406500739014.
			name: "three relevant, two in the top four", rel: []bool{false, true, false, true, true}, k: 4,
			want: 0.5701406500739014,
		},
		{
			// Five relevant, k = 3: DCG = D(1) + D(3) = 1 + 1/log2(3) =
			// 1.6309297535714575; ideal = D(1) + D(2) + D(3) = 2.6309297535714575;
			// NDCG = 0.6199062332840657.
			name: "more relevant than k", rel: []bool{true, false, true, true, true, true}, k: 3,
			want: 0.6199062332840657,
		},
		{
			// DCG = D(1) + D(2) = 2 = ideal.
			name: "perfect", rel: []bool{true, true, false}, k: 5,
			want: 1,
		},
		{
			// DCG = D(3) = 1/log2(3); ideal = D(1) = 1.
			name: "one relevant third", rel: []bool{false, false, true}, k: 3,
			want: 0.6309297535714575,
		},
		{
			// The only relevant item is past k: DCG = 0.
			name: "relevant past k", rel: []bool{false, false, true}, k: 2,
			want: 0,
		},
		{
			// No relevant item: the ideal DCG is 0 and NDCG is 0.
			name: "nothing relevant", rel: []bool{false, false}, k: 2,
			want: 0,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := NDCGAt(tc.rel, tc.k); !near(got, tc.want) {
				t.Errorf("NDCG@%d(%v) = %.17g, want %.17g", tc.k, tc.rel, got, tc.want)
			}
		})
	}
}

// AUC as 1 − the share of misordered (relevant, irrelevant) pairs (seed 002
// §4, AUC).
func TestAUC_handComputed(t *testing.T) {
	for _, tc := range []struct {
		name string
		rel  []bool
		want float64
	}{
		// Relevant at positions 2, 4, 5 with 1, 2 and 2 irrelevant items above:
		// 5 misordered of 3·2 = 6 pairs, AUC = 1 − 5/6 = 1/6.
		{"mostly misordered", []bool{false, true, false, true, true}, 1.0 / 6},
		// Relevant at 1 and 3; one irrelevant item above the second: 1 of
		// 2·2 = 4 pairs misordered, AUC = 3/4.
		{"one pair misordered", []bool{true, false, true, false}, 0.75},
		{"perfect", []bool{true, true, false, false, false}, 1},
		// Every one of the 1·2 pairs misordered.
		{"reversed", []bool{false, false, true}, 0},
		// No pair to order: 1 by convention.
		{"all relevant", []bool{true, true}, 1},
		{"nothing relevant", []bool{false, false}, 1},
		{"empty", nil, 1},
	} {
		if got := AUC(tc.rel); !near(got, tc.want) {
			t.Errorf("%s: AUC(%v) = %.17g, want %.17g", tc.name, tc.rel, got, tc.want)
		}
	}
}

// The reciprocal rank, 1 / position of the first relevant result (seed 002
// §4, MRR).
func TestReciprocalRank_handComputed(t *testing.T) {
	for _, tc := range []struct {
		rel  []bool
		want float64
	}{
		{[]bool{true, false}, 1},                  // 1/1
		{[]bool{false, true, true}, 0.5},          // 1/2
		{[]bool{false, false, false, true}, 0.25}, // 1/4
		{[]bool{false, false}, 0},                 // no relevant result
		{nil, 0},
	} {
		if got := ReciprocalRank(tc.rel); !near(got, tc.want) {
			t.Errorf("RR(%v) = %.17g, want %.17g", tc.rel, got, tc.want)
		}
	}
}

// Prec@k, the relevant share of the first k results, and AP, Prec@k averaged
// over the positions of the relevant results (seed 002 §4).
func TestPrecisionAndAP_moreHandComputed(t *testing.T) {
	rel := []bool{true, false, true}
	for _, tc := range []struct {
		k    int
		want float64
	}{
		{1, 1},       // 1/1
		{2, 0.5},     // 1/2
		{3, 2.0 / 3}, // 2/3
		{0, 0},       // no result asked for
	} {
		if got := PrecisionAt(rel, tc.k); !near(got, tc.want) {
			t.Errorf("P@%d(%v) = %.17g, want %.17g", tc.k, rel, got, tc.want)
		}
	}
	// AP = (Prec@1 + Prec@3) / 2 = (1/1 + 2/3) / 2 = 5/6.
	if got, want := AveragePrecision(rel), 5.0/6; !near(got, want) {
		t.Errorf("AP(%v) = %.17g, want %.17g", rel, got, want)
	}
}

// ByDistance orders items by increasing distance with ties by index, the
// ranking y the measures above score; skip leaves the query out.
func TestByDistance_tiesByIndex(t *testing.T) {
	dist := []float64{0.5, 0.1, 0.5, 0, 0.1}
	// 3 (0), then 1 and 4 (0.1, by index), then 0 and 2 (0.5, by index).
	if got, want := ByDistance(dist, -1), []int{3, 1, 4, 0, 2}; !slices.Equal(got, want) {
		t.Errorf("ByDistance(%v, -1) = %v, want %v", dist, got, want)
	}
	if got, want := ByDistance(dist, 3), []int{1, 4, 0, 2}; !slices.Equal(got, want) {
		t.Errorf("ByDistance(%v, 3) = %v, want %v", dist, got, want)
	}
}
