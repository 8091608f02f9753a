package recsys

import (
	"context"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestHistoryWeights(t *testing.T) {
	got := HistoryWeights([]int32{0, 10, 10, 5}, 10)
	want := []float64{0.5, 1, 1, math.Sqrt(0.5)}
	for k := range want {
		if math.Abs(got[k]-want[k]) > 1e-15 {
			t.Fatalf("weights %v, want %v", got, want)
		}
	}
	if got := HistoryWeights([]int32{3, 900}, 0); !slices.Equal(got, []float64{1, 1}) {
		t.Errorf("no decay: weights %v", got)
	}
}

type decayFit struct {
	name string
	p    Params
}

// linearDecayFits are the models with a decay of past events whose score
// is linear in the user's row (ease both dense and sparse).
var linearDecayFits = []decayFit{
	{"itemknn", Params{K: 5}}, {"kunn-i", Params{K: 5}}, {"slim", Params{K: 5, L1: 0.1, L2: 1}},
	{"ease", Params{Extra: map[string]float64{"lambda": 5}}},
	{"ease", Params{K: 5, Extra: map[string]float64{"lambda": 5, "max_dense": 0}}},
}

// userDecayFits are the models with a decay of past events whose user
// side searches KNN(u) from the weighted row.
var userDecayFits = []decayFit{{"userknn", Params{K: 5}}, {"kunn-u", Params{K: 5}}, {"kunn", Params{K: 5}}}

// decayModels are the linear models with a decay of past events, fitted
// on x with half-life h.
func decayModels(t *testing.T, x *Matrix, h float64) []Model {
	t.Helper()
	return fitDecayed(t, x, h, linearDecayFits)
}

// fitDecayed fits each of fits on x with half-life h.
func fitDecayed(t *testing.T, x *Matrix, h float64, fits []decayFit) []Model {
	t.Helper()
	var out []Model
	for _, f := range fits {
		m, _ := New(f.name)
		p := f.p
		p.Extra = map[string]float64{}
		for k, v := range f.p.Extra {
			p.Extra[k] = v
		}
		p.Extra[HalfLifeKey] = h
		if err := m.Fit(context.Background(), x, p); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

// The weighted score is linear in the row: weights of 1 give Score, and
// any weights give Σ_k w_k · Score({h_k}).
func TestDecayer_ScoreWeighted_linear(t *testing.T) {
	x, _ := randomMatrix(t, 9, 25, 18, 0.3)
	rng := rand.New(rand.NewPCG(3, 4))
	for _, m := range decayModels(t, x, 7) {
		d := m.(Decayer)
		if d.HalfLife() != 7 || ParamsOf(m)[HalfLifeKey] != 7 {
			t.Fatalf("%s: half-life %v, params %v", m.Name(), d.HalfLife(), ParamsOf(m))
		}
		n := x.Items()
		for u := range x.Users() {
			h := x.Row(u)
			ones := make([]float64, len(h))
			w := make([]float64, len(h))
			for k := range h {
				ones[k], w[k] = 1, rng.Float64()
			}
			plain, got := make([]float64, n), make([]float64, n)
			m.Score(h, plain)
			d.ScoreWeighted(h, ones, got)
			for i := range plain {
				if math.Abs(got[i]-plain[i]) > 1e-12 {
					t.Fatalf("%s user %d: weights 1 score %v, Score %v", m.Name(), u, got, plain)
				}
			}
			want, one := make([]float64, n), make([]float64, n)
			for k, j := range h {
				m.Score([]uint32{j}, one)
				for i := range want {
					want[i] += w[k] * one[i]
				}
			}
			d.ScoreWeighted(h, w, got)
			for i := range want {
				if math.Abs(got[i]-want[i]) > 1e-12 {
					t.Fatalf("%s user %d item %d: weighted score %v, Σ w·Score %v", m.Name(), u, i, got[i], want[i])
				}
			}
		}
	}
}

// A history of items met on days 0 and 10 with a half-life of 10 days
// scores as ½·Score({day-0 item}) + Score({day-10 item}); with no days it
// is ScoreUser, and with a half-life of +Inf it is undecayed.
func TestScoreDecayed(t *testing.T) {
	x, _ := randomMatrix(t, 11, 20, 12, 0.35)
	for _, m := range decayModels(t, x, 10) {
		h := []uint32{2, 5}
		a, b := make([]float64, x.Items()), make([]float64, x.Items())
		m.Score(h[:1], a)
		m.Score(h[1:], b)
		got := make([]float64, x.Items())
		if !ScoreDecayed(m, -1, h, []int32{0, 10}, got) {
			t.Fatalf("%s: not decayed", m.Name())
		}
		for i := range got {
			if want := 0.5*a[i] + b[i]; math.Abs(got[i]-want) > 1e-12 {
				t.Fatalf("%s item %d: %v, want %v", m.Name(), i, got[i], want)
			}
		}
		plain := make([]float64, x.Items())
		m.Score(h, plain)
		if ScoreDecayed(m, -1, h, nil, got) || !slices.Equal(got, plain) {
			t.Errorf("%s: without days %v, want %v", m.Name(), got, plain)
		}
	}
	for _, m := range fitDecayed(t, x, math.Inf(1), append(slices.Clone(linearDecayFits), userDecayFits...)) {
		if Decays(m) || ParamsOf(m)[HalfLifeKey] != 0 {
			t.Errorf("%s: half-life +Inf decays (%v)", m.Name(), ParamsOf(m))
		}
	}
}

// RankHeldOut ranks with the decayed scores when the matrix has days:
// user 0 met item 0 long ago and item 1 yesterday; item 2 co-occurs with
// item 0 only and item 3 with item 1 only, in users 1–4.
func TestRankHeldOut_decayed(t *testing.T) {
	pairs := []Pair{{0, 0}, {0, 1}, {1, 0}, {1, 2}, {2, 0}, {2, 2}, {3, 1}, {3, 3}, {4, 0}, {4, 2}, {5, 1}, {5, 3}}
	days := []int32{0, 100, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	x := timedMatrix(t, 6, 4, pairs, days)
	held := make([][]uint32, 6)
	held[0] = []uint32{3}
	rank := func(h float64) int {
		m, _ := New("itemknn")
		if err := m.Fit(context.Background(), x, Params{K: 3, Extra: map[string]float64{HalfLifeKey: h}}); err != nil {
			t.Fatal(err)
		}
		ranks, _, err := RankHeldOut(context.Background(), m, x, x.Popularity(), [][][]uint32{held}, 0)
		if err != nil {
			t.Fatal(err)
		}
		return ranks[0][0][0]
	}
	// Ranks from 0. Undecayed, item 2 scores cos(0, 2) = 3/√12 ≈ 0.866
	// and item 3 cos(1, 3) = 2/√6 ≈ 0.816; with a half-life of 10 days
	// item 0, 100 days older, weighs 2⁻¹⁰ and item 3 comes first.
	if got := rank(0); got != 1 {
		t.Errorf("undecayed: item 3 at rank %d, want 1", got)
	}
	if got := rank(10); got != 0 {
		t.Errorf("half-life 10: item 3 at rank %d, want 0", got)
	}
}

func TestDecayer_MarshalBinary_halfLife(t *testing.T) {
	x, _ := randomMatrix(t, 13, 15, 10, 0.3)
	for _, m := range fitDecayed(t, x, 30, append(slices.Clone(linearDecayFits), userDecayFits...)) {
		data, err := m.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		back, err := Load(data)
		if err != nil {
			t.Fatalf("%s: %v", m.Name(), err)
		}
		if got := back.(Decayer).HalfLife(); got != 30 {
			t.Errorf("%s: loaded half-life %v", m.Name(), got)
		}
		// A half-life of 0 is never written.
		bad := slices.Clone(data)
		copy(bad[len(bad)-8:], make([]byte, 8))
		if _, err := Load(bad); err == nil {
			t.Errorf("%s: loaded a half-life of 0", m.Name())
		}
	}
}

func TestCandidates_halfLifeSettings(t *testing.T) {
	g := Grid{K: []int{10, 20}, SLIM: [][2]float64{{1, 1}}, Extra: map[string][]map[string]float64{
		"itemknn": {{HalfLifeKey: 7}, {HalfLifeKey: 30}}, "slim": {{HalfLifeKey: 7}}}}
	c := Caps{Items: 100, Users: 100}
	got := itemKCandidates("itemknn")(g, c)
	if len(got) != 4 || got[0].K != 10 || got[0].Extra[HalfLifeKey] != 7 || got[1].Extra[HalfLifeKey] != 30 || got[3].K != 20 {
		t.Errorf("itemknn candidates %+v", got)
	}
	if got := itemKCandidates("kunn-i")(g, c); len(got) != 2 || got[0].Extra != nil {
		t.Errorf("kunn-i candidates %+v, want k alone", got)
	}
	if got := userKCandidates("kunn-u")(Grid{K: []int{10, 20}, Extra: map[string][]map[string]float64{"kunn-u": {{HalfLifeKey: 4}}}}, c); len(got) != 2 || got[1].K != 20 || got[1].Extra[HalfLifeKey] != 4 {
		t.Errorf("kunn-u candidates %+v", got)
	}
	if got := userKCandidates("userknn")(g, c); len(got) != 2 || got[0].Extra != nil {
		t.Errorf("userknn candidates %+v, want k alone", got)
	}
	if got := kunnCandidates(Grid{K: []int{10, 20}, Extra: map[string][]map[string]float64{"kunn": {{HalfLifeKey: 4}, {HalfLifeKey: 16}}}}, c); len(got) != 4 || got[2].K != 20 || got[3].Extra[HalfLifeKey] != 16 {
		t.Errorf("kunn candidates %+v", got)
	}
	if got := kunnCandidates(g, c); len(got) != 2 || got[0].Extra != nil {
		t.Errorf("kunn candidates %+v, want k alone", got)
	}
	if got := slimCandidates(g, c); len(got) != 2 || got[1].Extra[HalfLifeKey] != 7 || got[1].L1 != 1 {
		t.Errorf("slim candidates %+v", got)
	}
}

func TestDecayer_Fit_badHalfLife(t *testing.T) {
	x, _ := randomMatrix(t, 5, 8, 6, 0.4)
	for _, f := range append(slices.Clone(linearDecayFits), userDecayFits...) {
		for _, h := range []float64{-1, math.NaN()} {
			m, _ := New(f.name)
			p := f.p
			p.Extra = maps.Clone(f.p.Extra)
			if p.Extra == nil {
				p.Extra = map[string]float64{}
			}
			p.Extra[HalfLifeKey] = h
			if err := m.Fit(context.Background(), x, p); err == nil {
				t.Errorf("%s: half-life %v fitted", f.name, h)
			}
		}
	}
}

// With every weight 1 the weighted user-based score is the unweighted
// one exactly, for live histories (self −1) and for training users left
// out of their own KNN(u), through ScoreDecayed with equal days too; on a
// dense matrix (popcount path for the cosine) and a sparse one, with and
// without the memo of unweighted neighbours, which the weighted search
// neither fills nor reads.
func TestUserP_ScoreWeighted_onesAreUnweighted(t *testing.T) {
	for _, shape := range []struct {
		m, n int
		p    float64
	}{{40, 30, 0.3}, {200, 60, 0.03}} {
		x, _ := randomMatrix(t, 17, shape.m, shape.n, shape.p)
		n := x.Items()
		for _, name := range []string{"userknn", "kunn-u", "kunn"} {
			kind := SimCosine
			if name != "userknn" {
				kind = SimKUNN
			}
			for _, k := range []int{1, 4, 12} {
				for _, cached := range []bool{false, true} {
					var cache *NeighbourCache
					if cached {
						cache = NewNeighbourCache(x, 12)
					}
					m := fitted(t, name, x, Params{K: k, Cache: cache, Extra: map[string]float64{HalfLifeKey: 3}})
					d := m.(Decayer)
					uw := m.(userWeightedScorer)
					plain, got := make([]float64, n), make([]float64, n)
					for u := range x.Users() {
						h := x.Row(u)
						ones := make([]float64, len(h))
						days := make([]int32, len(h))
						for j := range ones {
							ones[j], days[j] = 1, 40
						}
						m.Score(h, plain)
						d.ScoreWeighted(h, ones, got)
						if !slices.Equal(got, plain) {
							t.Fatalf("%s k=%d user %d: weights 1 score %v, Score %v", name, k, u, got, plain)
						}
						ScoreUser(m, u, h, plain)
						uw.ScoreUserWeighted(u, h, ones, got)
						if !slices.Equal(got, plain) {
							t.Fatalf("%s k=%d training user %d: weights 1 score %v, ScoreUser %v", name, k, u, got, plain)
						}
						clear(got)
						if !ScoreDecayed(m, u, h, days, got) || !slices.Equal(got, plain) {
							t.Fatalf("%s k=%d training user %d: equal days score %v, ScoreUser %v", name, k, u, got, plain)
						}
					}
					if cached {
						// ScoreUser filled the memo; empty a row and the
						// weighted search must still find its neighbours.
						want := x.Users()
						if name == "kunn" {
							// KUNN scores nothing, so searches no KNN(u),
							// for a user without items (c(u) = 0).
							want = 0
							for u := range x.Users() {
								if len(x.Row(u)) > 0 {
									want++
								}
							}
						}
						if got := cache.MemoisedUsers(kind); got != want {
							t.Fatalf("%s: %d users memoised, want %d", name, got, want)
						}
						memo := cache.users[kind]
						bogus := []Neighbour{}
						memo.rows[0].Store(&bogus)
						h := x.Row(0)
						ones := slices.Repeat([]float64{1}, len(h))
						uw.ScoreUserWeighted(0, h, ones, got)
						memo.rows[0].Store(nil)
						ScoreUser(m, 0, h, plain)
						if !slices.Equal(got, plain) || slices.Max(plain) == 0 {
							t.Fatalf("%s k=%d: weighted score %v read the memo, want %v", name, k, got, plain)
						}
						fresh := NewNeighbourCache(x, 12)
						m = fitted(t, name, x, Params{K: k, Cache: fresh, Extra: map[string]float64{HalfLifeKey: 3}})
						for u := range x.Users() {
							m.(userWeightedScorer).ScoreUserWeighted(u, x.Row(u), slices.Repeat([]float64{1}, len(x.Row(u))), got)
						}
						if got := fresh.MemoisedUsers(kind); got != 0 {
							t.Fatalf("%s: the weighted search memoised %d users", name, got)
						}
					}
				}
			}
		}
	}
}

// A live history {0 (weight 1), 1 (weight ½)} against training users
// v0 = {0, 1, 3}, v1 = {1, 2}, v2 = {0, 4}, v3 = {1}, ‖w‖₂ = √1.25, at
// k = 2. userknn: A(v0) = 1.5/(√1.25·√3) ≈ 0.775, A(v1) = 0.5/(√1.25·√2)
// ≈ 0.316, A(v2) = 1/(√1.25·√2) ≈ 0.632, A(v3) = 0.5/√1.25 ≈ 0.447, so
// KNN(u) = {v0, v2}; unweighted it is {v0 (0.816), v3 (0.707)}. kunn-u,
// with c(0) = 2, c(1) = 3: A(v0) = (1/√2 + 0.5/√3)/(√1.25·√3) ≈ 0.514,
// A(v1) = (0.5/√3)/(√1.25·√2) ≈ 0.183, A(v2) = (1/√2)/(√1.25·√2) ≈
// 0.447, A(v3) = (0.5/√3)/√1.25 ≈ 0.258: KNN(u) = {v0, v2} too. A
// history scaled by ¼ or by 10⁻²⁰⁰ (‖w‖₂² below the smallest float)
// scores the same, the cosine does not see the scale; an item of weight
// 0 adds nothing.
func TestUserP_ScoreWeighted_tiny(t *testing.T) {
	pairs := []Pair{{0, 0}, {0, 1}, {0, 3}, {1, 1}, {1, 2}, {2, 0}, {2, 4}, {3, 1}}
	x, err := NewMatrix(4, 5, pairs)
	if err != nil {
		t.Fatal(err)
	}
	n := 1.25
	for _, tc := range []struct {
		name   string
		v0, v2 float64
	}{
		{"userknn", 1.5 / math.Sqrt(n*3), 1 / math.Sqrt(n*2)},
		{"kunn-u", (1/math.Sqrt(2) + 0.5/math.Sqrt(3)) / math.Sqrt(n*3), (1 / math.Sqrt(2)) / math.Sqrt(n*2)},
	} {
		m := fitted(t, tc.name, x, Params{K: 2, Extra: map[string]float64{HalfLifeKey: 1}})
		want := []float64{tc.v0 + tc.v2, tc.v0, 0, tc.v0, tc.v2}
		for _, w := range [][]float64{{1, 0.5}, {0.25, 0.125}, {1e-200, 5e-201}, {1, 0.5, 0}} {
			got := make([]float64, 5)
			m.(Decayer).ScoreWeighted([]uint32{0, 1, 2}[:len(w)], w, got)
			for i := range want {
				if math.Abs(got[i]-want[i]) > 1e-14 {
					t.Fatalf("%s weights %v: scores %v, want %v", tc.name, w, got, want)
				}
			}
		}
	}
	// Unweighted, userknn takes v3 instead of v2: item 2 still 0, item
	// 4 now 0 too.
	m := fitted(t, "userknn", x, Params{K: 2})
	got := make([]float64, 5)
	m.Score([]uint32{0, 1}, got)
	if v0, v3 := 2/math.Sqrt(6), 1/math.Sqrt(2); math.Abs(got[1]-(v0+v3)) > 1e-14 || got[4] != 0 || math.Abs(got[3]-v0) > 1e-14 {
		t.Errorf("unweighted scores %v, want item 1 %v, item 3 %v, item 4 0", got, v0+v3, v0)
	}
}

// The ages of validation: training user 0 met item 0 long ago and item
// 1 yesterday. With no decay userknn at k = 1 takes user 1 ({0, 2}: the
// tie with user 2 goes to the lower index) and ranks item 2 first; with
// a half-life of 10 days item 0 weighs 2⁻¹⁰, user 2 ({1, 3}) is nearest
// and item 3 comes first.
func TestRankHeldOut_decayedUserknn(t *testing.T) {
	pairs := []Pair{{0, 0}, {0, 1}, {1, 0}, {1, 2}, {2, 1}, {2, 3}}
	x := timedMatrix(t, 3, 4, pairs, []int32{0, 100, 0, 0, 0, 0})
	held := [][]uint32{{3}, nil, nil}
	for _, tc := range []struct {
		h    float64
		want int
	}{{0, 1}, {10, 0}} {
		m := fitted(t, "userknn", x, Params{K: 1, Extra: map[string]float64{HalfLifeKey: tc.h}})
		ranks, _, err := RankHeldOut(context.Background(), m, x, x.Popularity(), [][][]uint32{held}, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := ranks[0][0][0]; got != tc.want {
			t.Errorf("half-life %v: item 3 at rank %d, want %d", tc.h, got, tc.want)
		}
	}
}

// KUNN's weighted score is its two sides' (Eq. 4.4) over the weighted row
// x_uj = w_j: the item part Σ_j w_j·A(i, j)/√(Σ_j w_j), which is kunn-i's
// weighted score over √c(u), plus the user part Σ_v A(u, v)·x_vi/√c(i)
// over the weighted KNN(u), which is kunn-u's weighted score times
// 1/√c(i); kunn, kunn-i and kunn-u share the KUNN similarities and k.
func TestKUNN_ScoreWeighted_sides(t *testing.T) {
	x, _ := randomMatrix(t, 23, 60, 25, 0.2)
	n := x.Items()
	p := Params{K: 4, Extra: map[string]float64{HalfLifeKey: 10}}
	kunn := fitted(t, "kunn", x, p).(*KUNN)
	kunnI := fitted(t, "kunn-i", x, p).(Decayer)
	kunnU := fitted(t, "kunn-u", x, p).(userWeightedScorer)
	got, items, users := make([]float64, n), make([]float64, n), make([]float64, n)
	for u := range x.Users() {
		h := x.Row(u)
		if len(h) == 0 {
			continue
		}
		w := make([]float64, len(h))
		sum := 0.0
		for k := range w {
			w[k] = 1 / float64(k+2) // 1/2, 1/3, ...
			sum += w[k]
		}
		kunn.ScoreUserWeighted(u, h, w, got)
		kunnI.ScoreWeighted(h, w, items)
		kunnU.ScoreUserWeighted(u, h, w, users)
		for i := range got {
			want := items[i]/math.Sqrt(sum) + users[i]/math.Sqrt(float64(x.ItemCount(i)))
			if x.ItemCount(i) == 0 {
				want = items[i] / math.Sqrt(sum)
			}
			if math.Abs(got[i]-want) > 1e-12*(1+math.Abs(want)) {
				t.Fatalf("user %d item %d: %v, want %v + %v·(1/√c(i)) = %v", u, i, got[i], items[i]/math.Sqrt(sum), users[i], want)
			}
		}
	}
}
