package mf

import (
	"math"
	"testing"

	"github.com/recsys-engine/recsys/recsys"
)

// iALS's point cost by hand on 1,000 users × 500 items, 20,000 positives
// and 100 validation users, 16 epochs of 3 CG steps: at d = 10 an epoch
// is 5·1,500·100 + 2·9·20,000·10 = 4,350,000, the exact user sweep
// 1,000·1,000/3 + 20,000·100/2 + 1,500·100; ×0.2 for the BLAS rate, and
// validation 100 × (6·500 + 0.25·500·10). At d = 20 the Gram terms grow
// 4× and the row terms 2×.
func TestALSPoint_byHand(t *testing.T) {
	s := recsys.Shape{Users: 1000, Items: 500, Positives: 20_000, ValidationUsers: 100}
	kind, err := recsys.KindOf("ials")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		p    recsys.Params
		ops  float64
	}{
		{"d=10", recsys.Params{K: 10}, 0.2*(16*4_350_000+1_000_000.0/3+1_000_000+150_000) + 100*(3000+1250)},
		{"d=20", recsys.Params{K: 20}, 0.2*(16*(3_000_000+7_200_000)+8_000_000.0/3+4_000_000+600_000) + 100*(3000+2500)},
		// 8 epochs: half the alternations, the same final sweep.
		{"d=10, 8 epochs", recsys.Params{K: 10, Extra: map[string]float64{"epochs": 8}}, 0.2*(8*4_350_000+1_000_000.0/3+1_000_000+150_000) + 100*(3000+1250)},
		// cg = 0 solves exactly every sweep: 1,500·1,000/3 + 20,000·100 +
		// 1,500·100 an epoch.
		{"d=10, exact", recsys.Params{K: 10, Extra: map[string]float64{"cg": 0}}, 0.2*(16*2_650_000+1_000_000.0/3+1_000_000+150_000) + 100*(3000+1250)},
	} {
		got, want := kind.PointCost(s, c.p), recsys.OpSeconds*c.ops
		if math.Abs(got-want) > 1e-12*want {
			t.Errorf("%s: %.9g s, want %.9g", c.name, got, want)
		}
	}
	// wrmf shares the formula with its own 15 epochs.
	wrmf, _ := recsys.KindOf("wrmf")
	if got, want := wrmf.PointCost(s, recsys.Params{K: 10}), recsys.OpSeconds*(0.2*(15*4_350_000+1_000_000.0/3+1_000_000+150_000)+100*(3000+1250)); math.Abs(got-want) > 1e-12*want {
		t.Errorf("wrmf d=10: %.9g s, want %.9g", got, want)
	}
}

// BPR: 100 epochs of P steps of d + 20 operations at 3 each; MFAUC: 30
// iterations of max(U, I) steps of 9,000 + 2·(2·10 + 16)·d, twice with
// the tanh weighting.
func TestSGDPoint_byHand(t *testing.T) {
	s := recsys.Shape{Users: 1000, Items: 500, Positives: 20_000, ValidationUsers: 100}
	val := 100 * (3000 + 0.25*500*10)
	if got, want := bprPoint(s, recsys.Params{K: 10}), recsys.OpSeconds*(3*100*20_000*30+val); math.Abs(got-want) > 1e-12*want {
		t.Errorf("bpr: %.9g s, want %.9g", got, want)
	}
	if got, want := mfaucPoint(s, recsys.Params{K: 10}), recsys.OpSeconds*(30*1000*(9000+2*36*10)+val); math.Abs(got-want) > 1e-12*want {
		t.Errorf("mfauc: %.9g s, want %.9g", got, want)
	}
	if got, want := mfaucPoint(s, recsys.Params{K: 10, Extra: map[string]float64{"rho": 1}}), recsys.OpSeconds*(30*1000*2*(9000+2*36*10)+val); math.Abs(got-want) > 1e-12*want {
		t.Errorf("mfauc tanh: %.9g s, want %.9g", got, want)
	}
}
