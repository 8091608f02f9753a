package mf

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/recsys-engine/recsys/recsys"
)

// dealt builds a trainer on x and deals one iteration's blocks.
func dealt(t *testing.T, x *recsys.Matrix, c aucConfig) *aucTrainer {
	t.Helper()
	rng := rand.New(rand.NewPCG(c.seed, 1))
	var f factors
	tr := newAUCTrainer(x, &c, &f, rng)
	tr.deal(rng)
	return tr
}

// blockWeights returns g_{i,b} and g′_{i,b} over the items of column block
// b for user i, computed from their definitions (zero outside the block or
// the respective set).
func blockWeights(tr *aucTrainer, i, b int) (g, gn []float64) {
	n := tr.x.Items()
	g, gn = make([]float64, n), make([]float64, n)
	for j := range n {
		if int(tr.colBlk[j]) != b {
			continue
		}
		wp, wn := 1.0, 1.0
		if tr.wPos != nil {
			wp, wn = tr.wPos[j], tr.wNeg[j]
		}
		if contains(tr.x.Row(i), uint32(j)) {
			g[j] = wp
		} else {
			gn[j] = wn
		}
	}
	normalise0(g)
	normalise0(gn)
	return g, gn
}

func normalise0(w []float64) {
	s := 0.0
	for _, v := range w {
		s += v
	}
	if s > 0 {
		for i := range w {
			w[i] /= s
		}
	}
}

// TestAUCTrainer_deal checks the block structure of an iteration: every
// row's items grouped by column block and every column's users by row
// block, and the item totals W_jw against their definition.
func TestAUCTrainer_deal(t *testing.T) {
	for _, tau := range []float64{0, 1.3} {
		t.Run(fmt.Sprintf("tau=%g", tau), func(t *testing.T) {
			x := randomMatrix(t, 4, 13, 17, 0.3)
			tr := dealt(t, x, aucConfig{factors: 2, blocks: 3, tau: tau, kappaW: 4, kappaY: 3, seed: 5})
			d := tr.d
			for u := range x.Users() {
				for b := range d {
					var want []uint32
					for _, i := range x.Row(u) {
						if int(tr.colBlk[i]) == b {
							want = append(want, i)
						}
					}
					got := tr.rp[tr.rptr[u*(d+1)+b]:tr.rptr[u*(d+1)+b+1]]
					if !slices.Equal(got, want) && len(got)+len(want) > 0 {
						t.Fatalf("user %d block %d: %v, want %v", u, b, got, want)
					}
				}
			}
			for i := range x.Items() {
				for w := range d {
					var want []uint32
					for _, u := range x.Col(i) {
						if int(tr.rowBlk[u]) == w {
							want = append(want, u)
						}
					}
					got := tr.cp[tr.cptr[i*(d+1)+w]:tr.cptr[i*(d+1)+w+1]]
					if !slices.Equal(got, want) && len(got)+len(want) > 0 {
						t.Fatalf("item %d block %d: %v, want %v", i, w, got, want)
					}
				}
			}
			for j := range x.Items() {
				b := int(tr.colBlk[j])
				for w := range d {
					want := 0.0
					for _, i := range tr.rowPerm[tr.rowStart[w]:tr.rowStart[w+1]] {
						g, gn := blockWeights(tr, int(i), b)
						want += g[j] + gn[j]
					}
					if got := tr.itemW[j*d+w]; math.Abs(got-want) > 1e-9*math.Max(1, want) {
						t.Errorf("W[item %d, rows %d] = %g, want %g", j, w, got, want)
					}
				}
			}
		})
	}
}

// exactBlockGrads returns the exact 1/m_b Σ_{i∈R_w} ∂θ_{i,b}/∂vⱼ and, for
// user u ∈ R_w, ∂θ_{u,b}/∂u (no regulariser), with every relevant and
// irrelevant item of block b weighted by g and g′.
func exactBlockGrads(tr *aucTrainer, j, w, u int) (gv, gu []float64) {
	k := tr.f.k
	b := int(tr.colBlk[j])
	users := tr.rowPerm[tr.rowStart[w]:tr.rowStart[w+1]]
	gv, gu = make([]float64, k), make([]float64, k)
	for _, i := range users {
		g, gn := blockWeights(tr, int(i), b)
		var pos, neg []int
		var a, bq, sp, sq []float64
		ui := tr.f.userVec(int(i))
		for q := range g {
			if g[q] > 0 {
				pos, a, sp = append(pos, q), append(a, g[q]), append(sp, dot(ui, tr.f.itemVec(q)))
			}
			if gn[q] > 0 {
				neg, bq, sq = append(neg, q), append(bq, gn[q]), append(sq, dot(ui, tr.f.itemVec(q)))
			}
		}
		if len(pos) == 0 || len(neg) == 0 {
			continue
		}
		c, d := make([]float64, len(pos)), make([]float64, len(neg))
		tr.c.obj.pairTerm(sp, a, sq, bq, c, d, make([]float64, len(pos)*len(neg)), true)
		for p, q := range pos {
			if q == j {
				axpy(c[p]/float64(len(users)), ui, gv)
			}
			if int(i) == u {
				axpy(c[p], tr.f.itemVec(q), gu)
			}
		}
		for p, q := range neg {
			if q == j {
				axpy(d[p]/float64(len(users)), ui, gv)
			}
			if int(i) == u {
				axpy(d[p], tr.f.itemVec(q), gu)
			}
		}
	}
	return gv, gu
}

// TestAUCTrainer_estimatesUnbiased averages the sampled user and item
// gradients of many draws (κ_W users, κ_Y items) and compares them with
// the exact block gradients: with φ the identity the estimators are
// unbiased, for every loss and for τ ≠ 0.
func TestAUCTrainer_estimatesUnbiased(t *testing.T) {
	const draws = 4000
	for _, loss := range []Loss{SquareHinge, Square, Sigmoid, Logistic} {
		for _, tau := range []float64{0, 1} {
			t.Run(fmt.Sprintf("%v/tau=%g", loss, tau), func(t *testing.T) {
				x := randomMatrix(t, 8, 12, 14, 0.35)
				tr := dealt(t, x, aucConfig{factors: 3, obj: objective{loss: loss, beta: 1.5}, blocks: 2, tau: tau, kappaW: 4, kappaY: 3, seed: 2})
				gaussian(rand.New(rand.NewPCG(1, 2)), tr.f.user, 0.7)
				gaussian(rand.New(rand.NewPCG(3, 4)), tr.f.item, 0.7)
				s := newAUCScratch(3, 3)
				s.rng = rand.New(rand.NewPCG(7, 7))
				checked := 0
				for j := range x.Items() {
					b := int(tr.colBlk[j])
					for w := range tr.d {
						users := tr.rowPerm[tr.rowStart[w]:tr.rowStart[w+1]]
						u := int(users[j%len(users)])
						wantV, wantU := exactBlockGrads(tr, j, w, u)
						var v, uu moments
						for range draws {
							tr.itemGrad(s, uint32(j), w, b)
							v.add(s.acc)
							// userGrad includes λu; λ is 0 here.
							if _, ok := tr.userGrad(s, u, b); ok {
								uu.add(s.grad)
							}
						}
						if z := v.z(wantV); z > 5 {
							t.Errorf("item %d rows %d: mean estimate %.4f, exact %.4f (%.1f standard errors)", j, w, v.mean(), wantV, z)
						}
						if z := uu.z(wantU); z > 5 {
							t.Errorf("user %d block %d: mean estimate %.4f, exact %.4f (%.1f standard errors)", u, b, uu.mean(), wantU, z)
						}
						checked++
						if checked == 3 {
							return
						}
					}
				}
			})
		}
	}
}

// moments accumulates draws of a vector estimate.
type moments struct {
	n         float64
	sum, sum2 []float64
}

func (m *moments) add(x []float64) {
	if m.sum == nil {
		m.sum, m.sum2 = make([]float64, len(x)), make([]float64, len(x))
	}
	m.n++
	for i, v := range x {
		m.sum[i] += v
		m.sum2[i] += v * v
	}
}

func (m *moments) mean() []float64 {
	out := make([]float64, len(m.sum))
	for i := range out {
		out[i] = m.sum[i] / m.n
	}
	return out
}

// z is the largest distance of a coordinate's mean from want, in standard
// errors of the mean (plus a rounding allowance).
func (m *moments) z(want []float64) float64 {
	worst := 0.0
	for i, s := range m.sum {
		mean := s / m.n
		se := math.Sqrt(math.Max(m.sum2[i]/m.n-mean*mean, 0)/m.n) + 1e-12
		worst = math.Max(worst, math.Abs(mean-want[i])/se)
	}
	return worst
}

// TestMFAUC_sameSeedSameModel fits twice, with one and with two goroutines:
// the blocks and their random streams depend on the seed only.
func TestMFAUC_sameSeedSameModel(t *testing.T) {
	x := synthetic(t, 2, 80, 60, 4, 2)
	p := recsys.Params{K: 4, Extra: map[string]float64{"epochs": 4, "blocks": 3}}
	fit := func(procs int) []byte {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		b, err := mustFit(t, "mfauc", x, p).MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	one := fit(1)
	if !slices.Equal(one, fit(2)) {
		t.Fatal("two fits with the same seed differ")
	}
	p.Extra["seed"] = 2
	if slices.Equal(one, fit(2)) {
		t.Fatal("seeds 1 and 2 give the same model")
	}
}

// TestMFAUC_objectiveDecreases checks the objective estimate of Fit on the
// synthetic problem: it falls by at least a tenth for each loss.
func TestMFAUC_objectiveDecreases(t *testing.T) {
	x := synthetic(t, 3, 150, 80, 5, 2)
	for _, tc := range []struct {
		loss Loss
		lr   float64
	}{{SquareHinge, 0.5}, {Square, 0.5}, {Sigmoid, 2}, {Logistic, 2}} {
		m := mustFit(t, "mfauc", x, recsys.Params{K: 5, Extra: map[string]float64{"loss": float64(tc.loss), "lr": tc.lr, "epochs": 25}}).(*MFAUC)
		tr := m.Trace()
		first, last := tr[0], tr[len(tr)-1]
		if tc.loss == Sigmoid {
			// L ∈ (−1, 0): compare the distances from the minimum −1.
			first, last = first+1, last+1
		}
		if last > first*0.9 {
			t.Errorf("%v: objective %.4f → %.4f", tc.loss, tr[0], tr[len(tr)-1])
		}
	}
}

func TestMFAUC_badParams(t *testing.T) {
	x := randomMatrix(t, 1, 5, 5, 0.5)
	for _, e := range []map[string]float64{{"loss": 4}, {"lr": -1}, {"kappa_y": 0}, {"blocks": 1.5}, {"tau": math.NaN()}} {
		if err := (&MFAUC{}).Fit(context.Background(), x, recsys.Params{K: 2, Extra: e}); err == nil {
			t.Errorf("Fit accepted %v", e)
		}
	}
	if err := (&MFAUC{}).Fit(context.Background(), x, recsys.Params{K: -1}); err == nil {
		t.Error("Fit accepted K = −1")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := (&MFAUC{}).Fit(ctx, x, recsys.Params{K: 2}); !errors.Is(err, context.Canceled) {
		t.Errorf("Fit with a cancelled context: %v", err)
	}
}

// TestMFAUC_divergenceIsAnError: a step size far too large makes the
// square loss diverge; Fit says so instead of returning NaN factors.
func TestMFAUC_divergenceIsAnError(t *testing.T) {
	x := synthetic(t, 4, 100, 60, 4, 2)
	err := (&MFAUC{}).Fit(context.Background(), x, recsys.Params{K: 4, Extra: map[string]float64{"loss": float64(Square), "lr": 50, "epochs": 30}})
	if err == nil {
		t.Fatal("Fit with lr = 50 succeeded")
	}
	t.Log(err)
}
