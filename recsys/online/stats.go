package online

import (
	"math"

	"github.com/recsys-engine/recsys/api"
)

// z95 is the two-sided 95% standard normal quantile.
const z95 = 1.959963984540054

// Wilson is the 95% score interval of the proportion k/n with continuity
// correction: Newcombe (1998), "Two-sided confidence intervals for the
// single proportion", Stat. Med. 17:857–872, method 4. Its coverage stays
// at or above the nominal 95% where the plain Wald interval's falls short.
func Wilson(k, n int64) api.Interval {
	if n <= 0 {
		return api.Interval{Low: 0, High: 1}
	}
	nf, p := float64(n), float64(k)/float64(n)
	z2 := z95 * z95
	den := 2 * (nf + z2)
	out := api.Interval{Rate: p, Low: 0, High: 1}
	if k > 0 {
		out.Low = max(0, (2*nf*p+z2-1-z95*math.Sqrt(z2-2-1/nf+4*p*(nf*(1-p)+1)))/den)
	}
	if k < n {
		out.High = min(1, (2*nf*p+z2+1+z95*math.Sqrt(z2+2-1/nf+4*p*(nf*(1-p)-1)))/den)
	}
	return out
}

// Tau is the scale of the normal mixture over the CTR difference in
// MSPRT: the size of difference the test is tuned to find (two points of
// CTR).
const Tau = 0.02

// LogMSPRT is the logarithm of the mixture sequential probability ratio of "the CTRs of two
// arms differ" against "they are equal", for k1/n1 against k2/n2, with a
// N(0, τ²) mixture over the difference and the difference of the
// proportions taken as normal with its plug-in variance V: Johari et al.
// (2022), "Always valid inference: continuous monitoring of A/B tests",
// the normal mixture mSPRT: Λ = √(V/(V+τ²)) · exp(τ²θ̂² / (2V(V+τ²))). Under
// equal rates the probability that Λ ever reaches 1/α, however often it is
// looked at, is at most α: reading the experiment at any time is safe.
// The logarithm keeps large evidence finite.
func LogMSPRT(k1, n1, k2, n2 int64, tau float64) float64 {
	if n1 <= 0 || n2 <= 0 {
		return 0
	}
	p1, p2 := float64(k1)/float64(n1), float64(k2)/float64(n2)
	v := p1*(1-p1)/float64(n1) + p2*(1-p2)/float64(n2)
	if v == 0 {
		// Both arms all 0 or all 1: pool them, so that 0/n against n/n
		// still has a variance.
		pp := float64(k1+k2) / float64(n1+n2)
		v = pp * (1 - pp) * (1/float64(n1) + 1/float64(n2))
		if v == 0 {
			return 0
		}
	}
	d := p1 - p2
	t2 := tau * tau
	return 0.5*math.Log(v/(v+t2)) + t2*d*d/(2*v*(v+t2))
}

// ArmCount is what one arm showed and what was credited to it.
type ArmCount struct {
	Impressions, Clicks int64
}

// Decide runs the experiment's test on the arms' counts: the leader (the
// highest CTR) wins once every arm has minImpressions and its MSPRT
// against every other arm reaches (k−1)/α (Bonferroni over the k−1
// comparisons); statistic and threshold are reported as logarithms. It
// returns the winner's index, or −1.
func Decide(arms []ArmCount, alpha float64, minImpressions int64) (int, api.TestOut) {
	k := len(arms)
	out := api.TestOut{Method: "msprt", Alpha: alpha, Threshold: math.Log(float64(max(k-1, 1)) / alpha)}
	if k < 2 {
		out.Reason = "fewer than two arms"
		return -1, out
	}
	lead := 0
	for i, a := range arms {
		if a.Impressions < minImpressions {
			out.Reason = "collecting: every arm needs min_impressions impressions before a winner is named"
			return -1, out
		}
		if rate(a) > rate(arms[lead]) {
			lead = i
		}
	}
	out.Statistic = math.Inf(1)
	for i, a := range arms {
		if i == lead {
			continue
		}
		l := arms[lead]
		out.Statistic = min(out.Statistic, LogMSPRT(l.Clicks, l.Impressions, a.Clicks, a.Impressions, Tau))
	}
	if out.Statistic >= out.Threshold {
		out.Decisive = true
		out.Reason = "the leader's CTR differs from every other arm's at the stated alpha"
		return lead, out
	}
	out.Reason = "not decisive yet: the evidence has not reached the threshold"
	return -1, out
}

func rate(a ArmCount) float64 {
	if a.Impressions == 0 {
		return 0
	}
	return float64(a.Clicks) / float64(a.Impressions)
}
