package rank

import (
	"math"
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
