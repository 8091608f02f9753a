package ltr

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/recsys-engine/recsys/recsys/metrics"
)

func TestOrder_ties(t *testing.T) {
	got := Order([]float64{1, 2, 2, 1, 3, 2})
	want := []int{4, 1, 2, 5, 0, 3}
	if !slices.Equal(got, want) {
		t.Fatalf("Order = %v, want %v", got, want)
	}
}

// TestQueryLambdas_twoItems checks one pair by hand: labels (0, 1) and
// equal scores, so the irrelevant candidate 0 is ranked first (ties by
// index) and the relevant one second. For ADG with |R⁺u| = 1,
// |ΔZ| = 1/log2(2) − 1/log2(3) = 1 − ln 2/ln 3; ρ = 1/(1+e⁰) = ½; with
// σ = 2, λ₁ = σ|ΔZ|ρ = 1 − ln 2/ln 3 = −λ₀ and
// w₀ = w₁ = σ²|ΔZ|ρ(1−ρ) = 1 − ln 2/ln 3. The measure is ADG = 1/log2(3).
func TestQueryLambdas_twoItems(t *testing.T) {
	lam, w := make([]float64, 2), make([]float64, 2)
	var sc queryScratch
	z, ok := queryLambdas([]float64{0, 0}, []uint8{0, 1}, lam, w, 2, discount{measure: ADG}, &sc)
	dz := 1 - math.Ln2/math.Log(3)
	if !ok || math.Abs(z-math.Ln2/math.Log(3)) > 1e-15 {
		t.Errorf("measure = %v, %v, want %v", z, ok, math.Ln2/math.Log(3))
	}
	for i, c := range []struct{ got, want float64 }{{lam[0], -dz}, {lam[1], dz}, {w[0], dz}, {w[1], dz}} {
		if math.Abs(c.got-c.want) > 1e-15 {
			t.Errorf("value %d = %v, want %v", i, c.got, c.want)
		}
	}
}

// bruteLambdas computes the λ-gradients and weights of one query by
// definition: for each relevant i and irrelevant j, |ΔZ_ij| is the change
// of the measure (from recsys/metrics) when the two are swapped in the
// ranking.
func bruteLambdas(s []float64, y []uint8, sigma float64, z func([]int) float64) (lam, w []float64) {
	n := len(s)
	lam, w = make([]float64, n), make([]float64, n)
	order := bruteOrder(s)
	rank := make([]int, n)
	for r, i := range order {
		rank[i] = r
	}
	measure := func(rank []int) float64 {
		var ranks []int
		for i := range n {
			if y[i] == 1 {
				ranks = append(ranks, rank[i])
			}
		}
		return z(ranks)
	}
	before := measure(rank)
	for i := range n {
		for j := range n {
			if y[i] != 1 || y[j] != 0 {
				continue
			}
			swapped := slices.Clone(rank)
			swapped[i], swapped[j] = rank[j], rank[i]
			dz := math.Abs(measure(swapped) - before)
			rho := 1 / (1 + math.Exp(sigma*(s[i]-s[j])))
			lam[i] += sigma * dz * rho
			lam[j] -= sigma * dz * rho
			w[i] += sigma * sigma * dz * rho * (1 - rho)
			w[j] += sigma * sigma * dz * rho * (1 - rho)
		}
	}
	return lam, w
}

func TestQueryLambdas_bruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for _, c := range []struct {
		name string
		dc   discount
		z    func([]int) float64
	}{
		{"adg", discount{measure: ADG}, metrics.ADG},
		{"ndcg", discount{measure: NDCG}, metrics.NDCG},
		{"ndcg@3", discount{measure: NDCG, k: 3}, func(r []int) float64 { return metrics.NDCGAt(r, 3) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			var sc queryScratch
			for trial := range 300 {
				n := 2 + rng.IntN(11)
				s, y := make([]float64, n), make([]uint8, n)
				for i := range n {
					// Half-integer scores so that ties happen.
					s[i] = float64(rng.IntN(9)-4) / 2
					if rng.IntN(3) == 0 {
						y[i] = 1
					}
				}
				sigma := 0.5 + rng.Float64()*2
				lam, w := make([]float64, n), make([]float64, n)
				z, ok := queryLambdas(s, y, lam, w, sigma, c.dc, &sc)
				wantLam, wantW := bruteLambdas(s, y, sigma, c.z)
				for i := range n {
					if math.Abs(lam[i]-wantLam[i]) > 1e-12 || math.Abs(w[i]-wantW[i]) > 1e-12 {
						t.Fatalf("trial %d s=%v y=%v: row %d λ=%v w=%v, want λ=%v w=%v",
							trial, s, y, i, lam[i], w[i], wantLam[i], wantW[i])
					}
				}
				ranks := bruteRanks(s, y)
				if ok != (len(ranks) > 0) || (ok && z != c.z(ranks)) {
					t.Fatalf("trial %d: measure %v, %v, want %v of ranks %v", trial, z, ok, c.z(ranks), ranks)
				}
			}
		})
	}
}
