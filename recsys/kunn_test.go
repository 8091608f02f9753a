package recsys

import (
	"context"
	"math"
	"testing"

	"github.com/recsys-engine/recsys/recsys/internal/brute"
)

// eq43 is the KUNN score of dissertation Eq. (4.3) computed literally:
// Σ_v Σ_j X_uj X_vj X_vi [I(j ∈ KNN(i)) + I(v ∈ KNN(u))] / √(c(u)c(i)c(v)c(j)),
// with KNN by sim_KUNN over I \ i and U \ u.
func eq43(d [][]bool, k int) [][]float64 {
	m, n := len(d), len(d[0])
	cu, ci := brute.RowCounts(d), brute.ColCounts(d)
	itemKNN := make([]map[int]bool, n)
	for i := range n {
		sim := make([]float64, n)
		for j := range sim {
			sim[j] = brute.KUNNItemSim(d, i, j)
		}
		itemKNN[i] = map[int]bool{}
		for _, e := range bruteKNN(sim, i, k) {
			itemKNN[i][int(e.Index)] = true
		}
	}
	userKNN := make([]map[int]bool, m)
	for u := range m {
		sim := make([]float64, m)
		for v := range sim {
			sim[v] = brute.KUNNUserSim(d, d[u], v)
		}
		userKNN[u] = map[int]bool{}
		for _, e := range bruteKNN(sim, u, k) {
			userKNN[u][int(e.Index)] = true
		}
	}
	out := make([][]float64, m)
	for u := range m {
		out[u] = make([]float64, n)
		for i := range n {
			s := 0.0
			for v := range m {
				for j := range n {
					if !(d[u][j] && d[v][j] && d[v][i]) {
						continue
					}
					ind := 0.0
					if itemKNN[i][j] {
						ind++
					}
					if userKNN[u][v] {
						ind++
					}
					s += ind / math.Sqrt(float64(cu[u])*float64(ci[i])*float64(cu[v])*float64(ci[j]))
				}
			}
			out[u][i] = s
		}
	}
	return out
}

func TestKUNN_ScoreUser_equalsEq43(t *testing.T) {
	for _, tc := range []struct {
		seed uint64
		k    int
	}{{1, 3}, {2, 5}, {3, 1}, {4, 40}} {
		x, d := randomMatrix(t, tc.seed, 25, 20, 0.2)
		want := eq43(d, tc.k)
		m := &KUNN{}
		if err := m.Fit(context.Background(), x, Params{K: tc.k}); err != nil {
			t.Fatal(err)
		}
		scores := make([]float64, x.Items())
		for u := range x.Users() {
			m.ScoreUser(u, x.Row(u), scores)
			for i := range scores {
				if !closeTo(scores[i], want[u][i], 1e-12) {
					t.Fatalf("seed %d k %d: score(%d, %d) = %g, Eq. (4.3) gives %g", tc.seed, tc.k, u, i, scores[i], want[u][i])
				}
			}
		}
	}
}

// Theorem 4.4: KUNN = aggsum_item/√c(u) + aggsum_user/√c(i), where the two
// aggsums are the kunn-i and kunn-u predictors.
func TestKUNN_Score_isSumOfKUNNiAndKUNNu(t *testing.T) {
	x, _ := randomMatrix(t, 8, 40, 30, 0.15)
	ctx := context.Background()
	p := Params{K: 5}
	kunn, ki, ku := &KUNN{}, &ItemP{name: "kunn-i"}, &UserP{name: "kunn-u"}
	for _, m := range []Model{kunn, ki, ku} {
		if err := m.Fit(ctx, x, p); err != nil {
			t.Fatal(err)
		}
	}
	s, si, su := make([]float64, 30), make([]float64, 30), make([]float64, 30)
	for u := range x.Users() {
		h := x.Row(u)
		if len(h) == 0 {
			continue
		}
		kunn.ScoreUser(u, h, s)
		ki.ScoreUser(u, h, si)
		ku.ScoreUser(u, h, su)
		for i := range s {
			want := si[i] / math.Sqrt(float64(len(h)))
			if c := x.ItemCount(i); c > 0 {
				want += su[i] / math.Sqrt(float64(c))
			}
			if !closeTo(s[i], want, 1e-12) {
				t.Fatalf("score(%d, %d) = %g, want %g", u, i, s[i], want)
			}
		}
	}
}
