package recsys

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
)

// TestExplain_sumsToScore checks that an item's contributions, taken all
// (n large), add up to its score: they are the terms of the sum.
func TestExplain_sumsToScore(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	var pairs []Pair
	for u := 0; u < 40; u++ {
		for i := 0; i < 30; i++ {
			if rng.Float64() < 0.2 {
				pairs = append(pairs, Pair{User: uint32(u), Item: uint32(i)})
			}
		}
	}
	x, err := NewMatrix(40, 30, pairs)
	if err != nil {
		t.Fatal(err)
	}
	history := []uint32{1, 4, 9, 15, 22}
	for _, name := range []string{"itemknn", "userknn", "kunn", "kunn-i", "kunn-u", "slim", "ease", "rp3beta"} {
		m, err := New(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Fit(context.Background(), x, Params{K: 10}); err != nil {
			t.Fatal(err)
		}
		scores := make([]float64, 30)
		m.Score(history, scores)
		items := []uint32{0, 2, 3, 5, 29}
		exp := m.(Explainer).Explain(history, items, 1000)
		for k, i := range items {
			sum := 0.0
			for _, c := range exp[k] {
				sum += c.Weight
			}
			if math.Abs(sum-scores[i]) > 1e-9 {
				t.Errorf("%s item %d: contributions sum to %g, score %g", name, i, sum, scores[i])
			}
		}
	}
}
