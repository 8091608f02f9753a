package metrics

import (
	"math"
	"math/rand/v2"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

func TestAll_handComputed(t *testing.T) {
	lg := math.Log2
	idcg3 := 1 + 1/lg(3) + 1/lg(4)
	for _, tc := range []struct {
		name  string
		ranks []int
		n     int
		want  Values
	}{
		{
			name:  "three relevant",
			ranks: []int{12, 0, 3}, // any order
			n:     20,
			want: Values{
				MADG:      (1/lg(2) + 1/lg(5) + 1/lg(14)) / 3,
				MRecall10: 2.0 / 3,
				MMAP:      (1.0/1 + 2.0/4 + 3.0/13) / 3,
				MNDCG:     (1/lg(2) + 1/lg(5) + 1/lg(14)) / idcg3,
				MNDCG10:   (1/lg(2) + 1/lg(5)) / idcg3,
				MATOP:     (19.0 + 16 + 7) / (3 * 19),
				// 17 irrelevant items: rank 0 beats 17, rank 3 beats 15
				// (2 irrelevant above), rank 12 beats 7 (10 above).
				MAUC: (17.0 + 15 + 7) / (3 * 17),
				MP10: 2.0 / 10,
				MMRR: 1,
			},
		},
		{
			name:  "one relevant item",
			ranks: []int{4},
			n:     10,
			want: Values{
				MADG: 1 / lg(6), MRecall10: 1, MMAP: 1.0 / 5, MNDCG: 1 / lg(6), MNDCG10: 1 / lg(6),
				MATOP: 5.0 / 9, MAUC: 5.0 / 9, MP10: 0.1, MMRR: 1.0 / 5,
			},
		},
		{
			name:  "one relevant item at the bottom, outside the top 10",
			ranks: []int{15},
			n:     16,
			want: Values{
				MADG: 1 / lg(17), MRecall10: 0, MMAP: 1.0 / 16, MNDCG: 1 / lg(17), MNDCG10: 0,
				MATOP: 0, MAUC: 0, MP10: 0, MMRR: 1.0 / 16,
			},
		},
		{
			name:  "perfect ranking",
			ranks: []int{1, 0, 2},
			n:     50,
			want: Values{
				MADG: idcg3 / 3, MRecall10: 1, MMAP: 1, MNDCG: 1, MNDCG10: 1,
				MATOP: (49.0 + 48 + 47) / (3 * 49), MAUC: 1, MP10: 0.3, MMRR: 1,
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := All(tc.ranks, tc.n)
			for k := range got {
				if !near(got[k], tc.want[k]) {
					t.Errorf("%s = %.15g, want %.15g", Names[k], got[k], tc.want[k])
				}
			}
		})
	}
}

func TestAll_empty(t *testing.T) {
	if got := All(nil, 10); got != (Values{}) {
		t.Fatalf("All(nil) = %v", got)
	}
}

// sampleMean draws O⁺u as a simple random sample of size s from P⁺u (the
// ranks in prior) reps times and returns the mean and standard error of the
// measure over the draws.
func sampleMean(rng *rand.Rand, prior []int, s, reps int, f func([]int) float64) (float64, float64) {
	sum, sum2 := 0.0, 0.0
	obs := make([]int, s)
	for range reps {
		for k, j := range rng.Perm(len(prior))[:s] {
			obs[k] = prior[j]
		}
		v := f(obs)
		sum += v
		sum2 += v * v
	}
	mean := sum / float64(reps)
	return mean, math.Sqrt((sum2/float64(reps) - mean*mean) / float64(reps))
}

// Theorem 4.1: if O⁺u is a simple random sample of P⁺u, ADG_obs is an
// unbiased estimator of ADG_comp (and so are the other UMD measures of
// Eq. 4.2, REC@k and ATOP); Theorem 4.2: NDCG_obs is biased, with
// E[NDCG_obs] = |O⁺u|·IDCG(|P⁺u|) / (|P⁺u|·IDCG(|O⁺u|)) · NDCG_comp.
func TestADG_unbiasedUnderRandomObservation(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 1))
	const nItems, nPrior, nObs, reps = 400, 60, 8, 40000
	// A fixed ranking of all items; the prior relevant items sit mostly
	// near the top, as for a good recommender.
	var prior []int
	seen := map[int]bool{}
	for len(prior) < nPrior {
		r := int(float64(nItems) * math.Pow(rng.Float64(), 2.5))
		if !seen[r] {
			seen[r] = true
			prior = append(prior, r)
		}
	}
	for _, tc := range []struct {
		name string
		f    func([]int) float64
	}{
		{"adg", ADG},
		{"rec@10", func(r []int) float64 { return RecallAt(r, 10) }},
		{"atop", func(r []int) float64 { return ATOP(r, nItems) }},
	} {
		comp := tc.f(prior)
		mean, se := sampleMean(rng, prior, nObs, reps, tc.f)
		if math.Abs(mean-comp) > 4*se {
			t.Errorf("%s: E[obs] = %.5f ± %.5f, complete-data value %.5f", tc.name, mean, se, comp)
		}
	}
	comp := NDCG(prior)
	mean, se := sampleMean(rng, prior, nObs, reps, NDCG)
	predicted := float64(nObs) * idcg(nPrior) / (float64(nPrior) * idcg(nObs)) * comp
	if math.Abs(mean-predicted) > 4*se {
		t.Errorf("ndcg: E[obs] = %.5f ± %.5f, Theorem 4.2 predicts %.5f", mean, se, predicted)
	}
	if math.Abs(mean-comp) < 20*se {
		t.Errorf("ndcg: E[obs] = %.5f ± %.5f is not clearly biased away from %.5f", mean, se, comp)
	}
}

// NDCG@k with more relevant items than k: the ideal ranking fills only the
// top k positions, so IDCG is taken over min(|R⁺u|, k) items (dissertation
// §4.4.1, "Comparison with NDCG", truncated to the top k).
func TestNDCGAt_moreRelevantThanK(t *testing.T) {
	lg := math.Log2
	for _, tc := range []struct {
		name  string
		ranks []int
		k     int
		want  float64
	}{
		{
			// DCG@3 = 1/log2(2) + 1/log2(3) + 1/log2(4) = IDCG(min(5, 3)).
			name: "five relevant filling the top three", ranks: []int{0, 1, 2, 3, 4}, k: 3,
			want: 1,
		},
		{
			// DCG@3 = 1/log2(0+2) + 1/log2(2+2) = 1 + 0.5 = 1.5 (ranks 3 and 5
			// fall outside the top 3); IDCG(min(4, 3)) = 1 + 1/log2(3) + 1/log2(4)
			// = 1.5 + 0.6309297535714575; NDCG@3 = 1.5 / 2.1309297535714575
			// = 0.7039180890341347.
			name: "four relevant, two in the top three", ranks: []int{5, 0, 3, 2}, k: 3,
			want: 1.5 / (1.5 + 1/lg(3)),
		},
		{
			// DCG@2 = 1/log2(1+2) = 0.6309297535714575; IDCG(min(3, 2)) =
			// 1/log2(2) + 1/log2(3) = 1.6309297535714575; NDCG@2 =
			// 0.6309297535714575 / 1.6309297535714575 = 0.38685280723454163.
			name: "three relevant, one in the top two", ranks: []int{1, 4, 7}, k: 2,
			want: (1 / lg(3)) / (1 + 1/lg(3)),
		},
		{
			// No relevant item in the top 2: DCG@2 = 0.
			name: "three relevant below the top two", ranks: []int{2, 3, 4}, k: 2,
			want: 0,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := NDCGAt(tc.ranks, tc.k); !near(got, tc.want) {
				t.Errorf("NDCG@%d(%v) = %.15g, want %.15g", tc.k, tc.ranks, got, tc.want)
			}
		})
	}
}

// All's ndcg@10 for a user with 12 relevant items, ranked 0…11 of 20: the
// top 10 are all relevant, so DCG@10 = IDCG(min(12, 10)) and NDCG@10 = 1,
// while REC@10 = 10/12 and P@10 = 10/10 (dissertation §4.4.1 and Eq. 4.2).
func TestAll_ndcgAt10WithTwelveRelevant(t *testing.T) {
	ranks := make([]int, 12)
	for r := range ranks {
		ranks[r] = r
	}
	got := All(ranks, 20)
	for _, c := range []struct {
		m    int
		want float64
	}{
		{MNDCG10, 1},
		{MNDCG, 1},
		{MRecall10, 10.0 / 12},
		{MP10, 1},
	} {
		if !near(got[c.m], c.want) {
			t.Errorf("%s = %.15g, want %.15g", Names[c.m], got[c.m], c.want)
		}
	}
}
