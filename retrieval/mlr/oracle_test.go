package mlr

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/recsys-engine/recsys/retrieval/rank"
)

// item is one candidate in a brute-force ranking.
type item struct {
	s   float64
	rel bool
}

// directValue is Δ(y*, y) + ⟨W, ψpo(q, y)⟩ computed from its definition
// (seed 002 Eq. 3) for the ranking given as a list of items in order.
func directValue(o Oracle, y []item) float64 {
	nP, nN := 0, 0
	rel := make([]bool, len(y))
	for p, it := range y {
		rel[p] = it.rel
		if it.rel {
			nP++
		} else {
			nN++
		}
	}
	ideal := make([]bool, len(y))
	for p := 0; p < nP; p++ {
		ideal[p] = true
	}
	v := o.scorePattern(ideal) - o.scorePattern(rel)
	for a := range y {
		for b := range y {
			if !y[a].rel || y[b].rel {
				continue
			}
			yij := 1.0 // a (relevant) before b (irrelevant)
			if b < a {
				yij = -1
			}
			v += yij * (y[a].s - y[b].s) / float64(nP*nN)
		}
	}
	return v
}

// bruteMax enumerates every ranking of the items.
func bruteMax(o Oracle, items []item) float64 {
	best := math.Inf(-1)
	perm := make([]int, len(items))
	for i := range perm {
		perm[i] = i
	}
	y := make([]item, len(items))
	var rec func(k int)
	rec = func(k int) {
		if k == len(perm) {
			for p, i := range perm {
				y[p] = items[i]
			}
			best = math.Max(best, directValue(o, y))
			return
		}
		for i := k; i < len(perm); i++ {
			perm[k], perm[i] = perm[i], perm[k]
			rec(k + 1)
			perm[k], perm[i] = perm[i], perm[k]
		}
	}
	rec(0)
	return best
}

// interleave builds the ranking of the oracle's answer r.
func interleave(pos, neg []float64, r []int) []item {
	var y []item
	j := 0
	for a, s := range pos {
		for ; j < r[a]; j++ {
			y = append(y, item{neg[j], false})
		}
		y = append(y, item{s, true})
	}
	for ; j < len(neg); j++ {
		y = append(y, item{neg[j], false})
	}
	return y
}

func TestOracle_Separate_bruteForce(t *testing.T) {
	oracles := []Oracle{
		{Loss: LossAUC}, {Loss: LossMAP}, {Loss: LossMRR},
		{Loss: LossPrecision, K: 1}, {Loss: LossPrecision, K: 2}, {Loss: LossPrecision, K: 3}, {Loss: LossPrecision, K: 10},
		{Loss: LossNDCG, K: 1}, {Loss: LossNDCG, K: 3}, {Loss: LossNDCG, K: 5}, {Loss: LossNDCG, K: 10},
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, o := range oracles {
		t.Run(fmt.Sprintf("%s@%d", o.Loss, o.K), func(t *testing.T) {
			for trial := 0; trial < 150; trial++ {
				nP := 1 + rng.IntN(4)
				nN := 1 + rng.IntN(7-nP)
				// Score spreads from tiny to large so that both the loss and
				// the margin term can dominate.
				spread := []float64{0.05, 0.5, 2, 8}[trial%4]
				var items []item
				pos := make([]float64, nP)
				neg := make([]float64, nN)
				for a := range pos {
					pos[a] = -spread * rng.Float64()
					items = append(items, item{pos[a], true})
				}
				for b := range neg {
					neg[b] = -spread * rng.Float64()
					items = append(items, item{neg[b], false})
				}
				slices.SortFunc(pos, func(a, b float64) int { return -cmpF(a, b) })
				slices.SortFunc(neg, func(a, b float64) int { return -cmpF(a, b) })
				r, delta := o.Separate(pos, neg)
				for a := 1; a < len(r); a++ {
					if r[a] < r[a-1] || r[a] > nN {
						t.Fatalf("interleaving %v not monotone", r)
					}
				}
				y := interleave(pos, neg, r)
				got := directValue(o, y)
				want := bruteMax(o, items)
				if math.Abs(got-want) > 1e-9 {
					t.Fatalf("trial %d pos=%v neg=%v: oracle r=%v value %.12f, brute force max %.12f", trial, pos, neg, r, got, want)
				}
				if wantDelta := o.Delta(r, nN); math.Abs(delta-wantDelta) > 1e-12 {
					t.Fatalf("delta %v, want %v", delta, wantDelta)
				}
			}
		})
	}
}

func cmpF(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// TestOracle_AUC_handComputed: one relevant at score −1, irrelevant at −0.8
// and −1.6. Swapping with −0.8 gains because −0.8 > −1 − ½; with −1.6 it
// does not. Value: Δ = 1/2, ψ-term = (−(−1+0.8) + (−1+1.6))/2 = 0.4.
func TestOracle_AUC_handComputed(t *testing.T) {
	o := Oracle{Loss: LossAUC}
	r, delta := o.Separate([]float64{-1}, []float64{-0.8, -1.6})
	if !slices.Equal(r, []int{1}) || delta != 0.5 {
		t.Fatalf("got r=%v Δ=%v, want [1] 0.5", r, delta)
	}
	if got := directValue(o, interleave([]float64{-1}, []float64{-0.8, -1.6}, r)); math.Abs(got-0.9) > 1e-12 {
		t.Fatalf("value %v, want 0.9", got)
	}
}

// TestSeparate_psiMatchesDefinition checks the factored Ψ̂ of Separate
// against ψpo built from explicit outer products (seed 002 Eq. 3, 4).
func TestSeparate_psiMatchesDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	n, d := 9, 3
	x := mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			x.Set(i, j, rng.NormFloat64())
		}
	}
	labels := []int{0, 0, 0, 1, 1, 1, 2, 2, 0}
	sup, err := rank.FromLabels(labels)
	if err != nil {
		t.Fatal(err)
	}
	a := mat.NewDense(d, d, nil)
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			a.Set(i, j, rng.NormFloat64())
		}
	}
	w := mat.NewSymDense(d, nil)
	w.SymOuterK(1, a)
	for _, loss := range Losses {
		t.Run(loss, func(t *testing.T) {
			o := Oracle{Loss: loss, K: 2}
			p := Problem{X: x, Sup: sup}
			got, err := Separate(context.Background(), p, o, w, 2)
			if err != nil {
				t.Fatal(err)
			}
			want := mat.NewSymDense(d, nil)
			wantDelta := 0.0
			for q := 0; q < n; q++ {
				dist := func(i int) float64 {
					v := make([]float64, d)
					for j := range v {
						v[j] = x.At(q, j) - x.At(i, j)
					}
					dv := mat.NewVecDense(d, v)
					return mat.Inner(dv, w, dv)
				}
				var pos, neg []int
				for i := 0; i < n; i++ {
					if i == q {
						continue
					}
					if labels[i] == labels[q] {
						pos = append(pos, i)
					} else {
						neg = append(neg, i)
					}
				}
				byDist := func(a, b int) int {
					if c := cmpF(dist(a), dist(b)); c != 0 {
						return c
					}
					return a - b
				}
				slices.SortFunc(pos, byDist)
				slices.SortFunc(neg, byDist)
				ps := make([]float64, len(pos))
				for i, v := range pos {
					ps[i] = -dist(v)
				}
				ns := make([]float64, len(neg))
				for i, v := range neg {
					ns[i] = -dist(v)
				}
				r, delta := o.Separate(ps, ns)
				wantDelta += delta
				// position of every item in y and in y*.
				before := func(ai, bj int, rr []int) bool { return bj >= rr[ai] } // relevant a before irrelevant b (0-based)
				star := make([]int, len(pos))
				for ai := range pos {
					for bj := range neg {
						phi := func(i int) *mat.SymDense {
							v := make([]float64, d)
							for j := range v {
								v[j] = x.At(q, j) - x.At(i, j)
							}
							m := mat.NewSymDense(d, nil)
							m.SymRankOne(m, -1, mat.NewVecDense(d, v))
							return m
						}
						diff := mat.NewSymDense(d, nil)
						AddScaled(diff, 1, phi(pos[ai]))
						AddScaled(diff, -1, phi(neg[bj]))
						scale := 1 / float64(len(pos)*len(neg))
						ystar, yy := 1.0, 1.0
						if !before(ai, bj, star) {
							ystar = -1
						}
						if !before(ai, bj, r) {
							yy = -1
						}
						AddScaled(want, (ystar-yy)*scale/float64(n), diff)
					}
				}
			}
			wantDelta /= float64(n)
			if math.Abs(got.Delta-wantDelta) > 1e-12 {
				t.Errorf("Δ̂ = %v, want %v", got.Delta, wantDelta)
			}
			if !mat.EqualApprox(got.Psi, want, 1e-10) {
				t.Errorf("Ψ̂ =\n%v\nwant\n%v", mat.Formatted(got.Psi), mat.Formatted(want))
			}
		})
	}
}

// TestOracle_MAP_poolingMatchesDP checks the pooled MAP oracle against the
// dynamic programme on inputs too large for brute force.
func TestOracle_MAP_poolingMatchesDP(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	o := Oracle{Loss: LossMAP}
	for trial := 0; trial < 200; trial++ {
		nP, nN := 1+rng.IntN(40), 1+rng.IntN(300)
		spread := []float64{0.01, 0.3, 3, 30}[trial%4]
		pos := make([]float64, nP)
		neg := make([]float64, nN)
		for i := range pos {
			pos[i] = -spread * rng.Float64()
		}
		for i := range neg {
			neg[i] = -spread * rng.Float64()
		}
		slices.SortFunc(pos, func(a, b float64) int { return -cmpF(a, b) })
		slices.SortFunc(neg, func(a, b float64) int { return -cmpF(a, b) })
		r := make([]int, nP)
		o.separateMAP(newTerms(pos, neg), r)
		rdp := make([]int, nP)
		o.separateMAPDP(newTerms(pos, neg), rdp)
		got := directValue(o, interleave(pos, neg, r))
		want := directValue(o, interleave(pos, neg, rdp))
		if math.Abs(got-want) > 1e-9 {
			t.Fatalf("trial %d (nP=%d nN=%d): pooling value %.12f, DP %.12f", trial, nP, nN, got, want)
		}
	}
}
