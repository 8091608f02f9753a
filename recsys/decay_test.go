package recsys

import (
	"context"
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

// decayModels are the models with a decay of past events, fitted on x
// with half-life h (ease both dense and sparse).
func decayModels(t *testing.T, x *Matrix, h float64) []Model {
	t.Helper()
	fits := []struct {
		name string
		p    Params
	}{
		{"itemknn", Params{K: 5}}, {"kunn-i", Params{K: 5}}, {"slim", Params{K: 5, L1: 0.1, L2: 1}},
		{"ease", Params{Extra: map[string]float64{"lambda": 5}}},
		{"ease", Params{K: 5, Extra: map[string]float64{"lambda": 5, "max_dense": 0}}},
	}
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
	for _, m := range decayModels(t, x, math.Inf(1)) {
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
	for _, m := range decayModels(t, x, 30) {
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
	if got := slimCandidates(g, c); len(got) != 2 || got[1].Extra[HalfLifeKey] != 7 || got[1].L1 != 1 {
		t.Errorf("slim candidates %+v", got)
	}
}
