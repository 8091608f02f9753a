package retrieval

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestStandardization_extremeValues checks that the z-scoring statistics
// and the standardised rows stay finite, and keep their meaning, for
// features at the ends of the float64 range, where the plain sums overflow.
func TestStandardization_extremeValues(t *testing.T) {
	const top = math.MaxFloat64
	xs := [][]float64{{1e308, -top, 1}, {1e308, top, 2}, {0, 0, 3}, {-1e308, 5e-324, 4}}
	mean, scale, err := Standardization(xs)
	if err != nil {
		t.Fatal(err)
	}
	for j := range mean {
		if !finite(mean[j]) || !finite(scale[j]) || scale[j] <= 0 {
			t.Fatalf("feature %d: mean %v scale %v, want finite with a positive scale", j, mean[j], scale[j])
		}
	}
	// Column 0 is {1, 1, 0, −1}·1e308: mean 0.25e308, sd √(11/12)·1e308.
	if got, want := mean[0], 0.25e308; math.Abs(got-want) > 1e-12*want {
		t.Errorf("mean[0] = %v, want %v", got, want)
	}
	if got, want := scale[0], math.Sqrt(11.0/12)*1e308; math.Abs(got-want) > 1e-12*want {
		t.Errorf("scale[0] = %v, want %v", got, want)
	}
	// The third column is ordinary and must not change: mean 2.5, sd √(5/3).
	if mean[2] != 2.5 || scale[2] != math.Sqrt(5.0/3) {
		t.Errorf("ordinary feature: mean %v scale %v, want 2.5 and √(5/3)", mean[2], scale[2])
	}
	z := Standardize(xs, mean, scale)
	r, c := z.Dims()
	for i := range r {
		for j := range c {
			if v := z.At(i, j); !finite(v) || math.Abs(v) > 2 {
				t.Fatalf("z[%d][%d] = %v, want finite within two standard deviations", i, j, v)
			}
		}
	}
	if z.At(0, 0) != z.At(1, 0) || z.At(0, 0) <= z.At(2, 0) {
		t.Errorf("z of column 0 = %v, want equal values equal and the order kept", mat.Col(nil, 0, z))
	}
}

// TestMetric_farQueryFinite checks that a query far outside the training
// range, on a feature with a tiny spread, still projects to finite values
// and finite distances, ordered by how far it is.
func TestMetric_farQueryFinite(t *testing.T) {
	m := Euclidean([]float64{0, 1e-300}, []float64{1, 1e-300})
	items := [][]float64{{0, 0}, {1, 1e-300}, {-math.MaxFloat64, math.MaxFloat64}}
	dist := func(q []float64) []float64 {
		t.Helper()
		out := make([]float64, len(items))
		for k, it := range items {
			d, err := m.Distance(q, it)
			if err != nil {
				t.Fatal(err)
			}
			if !finite(d) || d < 0 {
				t.Fatalf("distance %v from %v to %v, want finite", d, q, it)
			}
			out[k] = d
		}
		return out
	}
	if d := dist([]float64{1e308, 1e300}); d[1] >= d[0] || d[2] <= d[0] {
		t.Errorf("distances from (1e308, 1e300) = %v, want item 1 nearer than item 0, item 2 farthest", d)
	}
	if d := dist([]float64{math.MaxFloat64, -math.MaxFloat64}); d[2] <= d[1] {
		t.Errorf("distances from (max, −max) = %v, want the opposite corner farthest", d)
	}
	if d := dist([]float64{0, 0}); d[0] != 0 || d[1] <= 0 {
		t.Errorf("distances from (0, 0) = %v, want 0 to item 0", d)
	}
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
