package metrics_test

import (
	"math"
	"testing"

	"github.com/recsys-engine/recsys/recsys"
	"github.com/recsys-engine/recsys/recsys/metrics"
)

// An external test package: package recsys imports metrics, so only a
// metrics_test package may import recsys.

func nearX(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

// Score ties are broken by popularity, then index (§4.7.3), before the
// measures see the ranks.
func TestAll_tiesBrokenByPopularity(t *testing.T) {
	scores := make([]float64, 7) // a constant predictor: all tied
	pop := []uint32{3, 5, 5, 1, 0, 2, 3}
	train := []uint32{1}
	// Order of the items not in training: 2 (pop 5), 0 and 6 (pop 3, index
	// decides), 5, 3, 4.
	ranks := recsys.Ranks(scores, pop, train, []uint32{6, 4})
	if ranks[0] != 2 || ranks[1] != 5 {
		t.Fatalf("ranks = %v, want [2 5]", ranks)
	}
	got := metrics.All(ranks, 6)
	if want := (1/math.Log2(4) + 1/math.Log2(7)) / 2; !nearX(got[metrics.MADG], want) {
		t.Fatalf("ADG = %g, want %g", got[metrics.MADG], want)
	}
	if want := (1.0/3 + 2.0/6) / 2; !nearX(got[metrics.MMAP], want) {
		t.Fatalf("MAP = %g, want %g", got[metrics.MMAP], want)
	}
	if want := 1.0 / 3; !nearX(got[metrics.MMRR], want) {
		t.Fatalf("MRR = %g, want %g", got[metrics.MMRR], want)
	}
	// 4 irrelevant items at ranks 0, 1, 3, 4: rank 2 beats two of them,
	// rank 5 none.
	if want := 2.0 / 8; !nearX(got[metrics.MAUC], want) {
		t.Fatalf("AUC = %g, want %g", got[metrics.MAUC], want)
	}
}
