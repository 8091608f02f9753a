package online

import (
	"fmt"
	"math"
	"testing"

	"github.com/recsys-engine/recsys/api"
)

// TestWilson_newcombe: the continuity-corrected score intervals of
// Newcombe (1998), Table I, method 4.
func TestWilson_newcombe(t *testing.T) {
	for _, c := range []struct {
		k, n      int64
		low, high float64
	}{
		{81, 263, 0.2535, 0.3682},
		{15, 148, 0.0598, 0.1644},
		{0, 20, 0, 0.2005},
		{1, 29, 0.0018, 0.1963},
	} {
		got := Wilson(c.k, c.n)
		if math.Abs(got.Low-c.low) > 5e-5 || math.Abs(got.High-c.high) > 5e-5 || got.Rate != float64(c.k)/float64(c.n) {
			t.Errorf("Wilson(%d, %d) = %+v, want [%.4f, %.4f]", c.k, c.n, got, c.low, c.high)
		}
	}
	// k/n and (n−k)/n mirror each other.
	for _, c := range [][2]int64{{0, 29}, {3, 40}, {81, 263}} {
		a, b := Wilson(c[0], c[1]), Wilson(c[1]-c[0], c[1])
		if math.Abs(a.Low-(1-b.High)) > 1e-12 || math.Abs(a.High-(1-b.Low)) > 1e-12 {
			t.Errorf("Wilson(%d, %d) = %+v does not mirror %+v", c[0], c[1], a, b)
		}
	}
	if got := Wilson(0, 0); got != (api.Interval{Low: 0, High: 1}) {
		t.Errorf("Wilson(0, 0) = %+v, want [0, 1]", got)
	}
}

// TestLogMSPRT_handValue: 60/500 against 40/500 with τ = 0.02:
// V = (0.12·0.88 + 0.08·0.92)/500 = 3.584e-4, and
// ½ ln(V/(V+τ²)) + τ²θ̂²/(2V(V+τ²)) = −0.374806 + 1.177316 = 0.802510.
func TestLogMSPRT_handValue(t *testing.T) {
	if got := LogMSPRT(60, 500, 40, 500, 0.02); math.Abs(got-0.802510) > 1e-6 {
		t.Errorf("LogMSPRT = %.6f, want 0.802510", got)
	}
	// Symmetric in the arms; no evidence for equal rates (the mixture
	// only costs: ½ ln(V/(V+τ²)) < 0).
	if a, b := LogMSPRT(60, 500, 40, 500, 0.02), LogMSPRT(40, 500, 60, 500, 0.02); a != b {
		t.Errorf("not symmetric: %g, %g", a, b)
	}
	if got := LogMSPRT(50, 500, 50, 500, 0.02); got >= 0 {
		t.Errorf("equal rates: %g, want < 0", got)
	}
	// Huge evidence stays finite.
	if got := LogMSPRT(900_000, 1_000_000, 100_000, 1_000_000, 0.02); math.IsInf(got, 0) || math.IsNaN(got) || got < 1000 {
		t.Errorf("huge evidence: %g", got)
	}
}

func TestDecide_cases(t *testing.T) {
	arms := []ArmCount{{Impressions: 5000, Clicks: 400}, {Impressions: 5000, Clicks: 600}}
	if win, test := Decide(arms, 0.05, 6000); win != -1 || test.Decisive {
		t.Errorf("below min_impressions: winner %d, %+v", win, test)
	}
	win, test := Decide(arms, 0.05, 1000)
	if win != 1 || !test.Decisive || test.Threshold != math.Log(20) || test.Statistic < test.Threshold {
		t.Errorf("8%% against 12%% on 5000 each: winner %d, %+v", win, test)
	}
	if win, test := Decide([]ArmCount{{5000, 500}, {5000, 510}}, 0.05, 1000); win != -1 || test.Decisive {
		t.Errorf("10%% against 10.2%%: winner %d, %+v", win, test)
	}
	// Three arms: Bonferroni, threshold ln(2/α); the leader must beat both.
	three := []ArmCount{{5000, 400}, {5000, 600}, {5000, 590}}
	if win, test := Decide(three, 0.05, 1000); win != -1 || test.Threshold != math.Log(40) {
		t.Errorf("leader close to the second: winner %d, %+v", win, test)
	}
}

// TestArmOf_shares: the hash splits users by the shares, keeps a user in
// one arm, and two experiments split independently.
func TestArmOf_shares(t *testing.T) {
	arms := []api.Arm{{Model: "a", Share: 30}, {Model: "b", Share: 70}}
	const users = 100_000
	inA, same := 0, 0
	for u := range users {
		user := fmt.Sprint("user-", u)
		k := ArmOf("x000001", user, arms)
		if k != ArmOf("x000001", user, arms) {
			t.Fatalf("user %s moved", user)
		}
		if k == 0 {
			inA++
		}
		if k == ArmOf("x000002", user, arms) {
			same++
		}
	}
	if share := float64(inA) / users; math.Abs(share-0.3) > 0.01 {
		t.Errorf("arm a has %.3f of the users, want 0.30", share)
	}
	// Independent splits agree with probability 0.3² + 0.7² = 0.58.
	if agree := float64(same) / users; math.Abs(agree-0.58) > 0.01 {
		t.Errorf("two experiments agree on %.3f of the users, want 0.58", agree)
	}
}
