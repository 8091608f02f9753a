package online

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/recsys-engine/recsys/api"
)

// population simulates one experiment: users users, each assigned by
// ArmOf, see lists lists of listLen items and click each shown item with
// the true CTR of their arm. peek, when not nil, is called after each
// tenth of the users with the counts so far.
func population(rng *rand.Rand, exp string, arms []api.Arm, ctr []float64, users, lists, listLen int, peek func([]ArmCount)) []ArmCount {
	counts := make([]ArmCount, len(arms))
	for u := range users {
		k := ArmOf(exp, fmt.Sprint("user-", u), arms)
		for range lists * listLen {
			counts[k].Impressions++
			if rng.Float64() < ctr[k] {
				counts[k].Clicks++
			}
		}
		if peek != nil && (u+1)%(users/10) == 0 {
			peek(counts)
		}
	}
	return counts
}

// TestSimulation_namesBetterArm: users click with known probabilities
// that favour one model (15% against 5%). Over 4,000 repeated experiments
// of 120 users (about 600 impressions an arm) the test names the better
// arm in at least 99% and never the worse one, and every arm's 95%
// interval holds the true CTR in at least 95% of the runs.
func TestSimulation_namesBetterArm(t *testing.T) {
	const runs = 4000
	arms := []api.Arm{{Model: "popular", Share: 50}, {Model: "itemknn", Share: 50}}
	ctr := []float64{0.05, 0.15}
	rng := rand.New(rand.NewPCG(1, 2))
	covered := make([]int, len(arms))
	named := map[int]int{}
	for r := range runs {
		counts := population(rng, fmt.Sprintf("x%06d", r+1), arms, ctr, 120, 1, 10, nil)
		for k, c := range counts {
			if iv := Wilson(c.Clicks, c.Impressions); iv.Low <= ctr[k] && ctr[k] <= iv.High {
				covered[k]++
			}
		}
		win, _ := Decide(counts, DefaultAlpha, 200)
		named[win]++
	}
	for k := range arms {
		if share := float64(covered[k]) / runs; share < 0.95 {
			t.Errorf("arm %s: the interval held the true CTR %.2f in %.3f of the runs, want ≥ 0.95", arms[k].Model, ctr[k], share)
		} else {
			t.Logf("arm %s: the interval held the true CTR in %.3f of %d runs", arms[k].Model, share, runs)
		}
	}
	if named[0] > 0 || float64(named[1])/runs < 0.99 {
		t.Errorf("winners over %d runs: %v (index 1 is itemknn, −1 none); want itemknn in ≥ 99%%, popular never", runs, named)
	}
	t.Logf("winners: %v", named)
}

// TestWilson_exactCoverage: the probability, under the binomial law, that
// the interval of k/n holds p is at least 95% for every n from 400 to 800
// and the CTRs of the simulation: the coverage the simulation measures is
// the interval's, not luck.
func TestWilson_exactCoverage(t *testing.T) {
	for _, p := range []float64{0.05, 0.1, 0.15} {
		for n := int64(400); n <= 800; n++ {
			cover := 0.0
			for k := int64(0); k <= n; k++ {
				if iv := Wilson(k, n); iv.Low <= p && p <= iv.High {
					lg, _ := math.Lgamma(float64(n + 1))
					lk, _ := math.Lgamma(float64(k + 1))
					lnk, _ := math.Lgamma(float64(n - k + 1))
					cover += math.Exp(lg - lk - lnk + float64(k)*math.Log(p) + float64(n-k)*math.Log(1-p))
				}
			}
			if cover < 0.95 {
				t.Errorf("p = %.2f, n = %d: coverage %.4f, want ≥ 0.95", p, n, cover)
			}
		}
	}
}

// TestSimulation_peekingAA: two arms with the same CTR, the experiment
// read ten times as it runs (peeking): the share of runs in which any
// reading names a winner stays within α, as the always-valid test
// promises. A fixed-horizon z-test read the same ten times would not (the
// test checks that too, so that the simulation can tell the difference).
func TestSimulation_peekingAA(t *testing.T) {
	const runs = 1000
	arms := []api.Arm{{Model: "a", Share: 50}, {Model: "b", Share: 50}}
	ctr := []float64{0.1, 0.1}
	rng := rand.New(rand.NewPCG(3, 4))
	falseWin, falseZ := 0, 0
	for r := range runs {
		won, zWon := false, false
		population(rng, fmt.Sprintf("x%06d", r+1), arms, ctr, 1000, 1, 10, func(c []ArmCount) {
			if win, _ := Decide(c, DefaultAlpha, 100); win >= 0 {
				won = true
			}
			if zTest(c[0], c[1]) {
				zWon = true
			}
		})
		falseWin += b2i(won)
		falseZ += b2i(zWon)
	}
	if rate := float64(falseWin) / runs; rate > DefaultAlpha {
		t.Errorf("A/A, read ten times: a winner was named in %.3f of the runs, want ≤ %.2f", rate, DefaultAlpha)
	}
	if rate := float64(falseZ) / runs; rate <= DefaultAlpha {
		t.Errorf("A/A, a plain z-test read ten times named a winner in only %.3f of the runs: the simulation cannot show peeking", rate)
	}
	t.Logf("A/A over %d runs, ten readings each: msprt named a winner in %d, a plain two-proportion z-test in %d", runs, falseWin, falseZ)
}

// zTest is the pooled two-proportion z-test at 5%, two-sided: what
// peeking breaks.
func zTest(a, b ArmCount) bool {
	if a.Impressions == 0 || b.Impressions == 0 {
		return false
	}
	p := float64(a.Clicks+b.Clicks) / float64(a.Impressions+b.Impressions)
	se := p * (1 - p) * (1/float64(a.Impressions) + 1/float64(b.Impressions))
	d := float64(a.Clicks)/float64(a.Impressions) - float64(b.Clicks)/float64(b.Impressions)
	return se > 0 && d*d/se > z95*z95
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
