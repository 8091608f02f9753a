package recsys

import (
	"context"
	"testing"
)

// benchMatrix is a generated MovieLens-100K-sized matrix: 1,000 users,
// 1,700 items, about 60 positives per user.
func benchMatrix(b *testing.B) *Matrix {
	b.Helper()
	return generated(b, 42, 1000, 1700, 60)
}

func BenchmarkItemKNN(b *testing.B) {
	x := benchMatrix(b)
	b.ResetTimer()
	for b.Loop() {
		m := &ItemP{name: "itemknn"}
		if err := m.Fit(context.Background(), x, Params{K: 100}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSLIMFit(b *testing.B) {
	x := benchMatrix(b)
	cache := NewNeighbourCache(x, 100)
	if _, err := cache.MaxRow(context.Background(), nil); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		m := &ItemP{name: "slim"}
		if err := m.Fit(context.Background(), x, Params{K: 100, L1: 1, L2: 1, Cache: cache}); err != nil {
			b.Fatal(err)
		}
	}
}

func benchScore(b *testing.B, name string) {
	x := benchMatrix(b)
	m, _ := New(name)
	if err := m.Fit(context.Background(), x, Params{K: 100}); err != nil {
		b.Fatal(err)
	}
	scoreUsers(b, m, x)
}

// scoreUsers measures scoring one user's history and taking the top 10,
// as a recommendation request does, cycling through the users of x.
func scoreUsers(b *testing.B, m Model, x *Matrix) {
	scores := make([]float64, x.Items())
	pop := x.Popularity()
	b.ResetTimer()
	u := 0
	for b.Loop() {
		h := x.Row(u % x.Users())
		m.Score(h, scores)
		TopN(scores, pop, h, 10)
		u++
	}
}

func BenchmarkScore_itemknn(b *testing.B) { benchScore(b, "itemknn") }
func BenchmarkScore_userknn(b *testing.B) { benchScore(b, "userknn") }
func BenchmarkScore_kunn(b *testing.B)    { benchScore(b, "kunn") }
func BenchmarkScore_slim(b *testing.B)    { benchScore(b, "slim") }

// benchFit measures Fit of a model with k = 100 on the MovieLens-100K-sized
// matrix. (userknn is left out: its Fit only keeps the matrix, and its
// neighbours are found at scoring time, see BenchmarkScore_userknn.)
func benchFit(b *testing.B, name string) {
	x := benchMatrix(b)
	b.ResetTimer()
	for b.Loop() {
		m, _ := New(name)
		if err := m.Fit(context.Background(), x, Params{K: 100}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFit_kunn(b *testing.B) { benchFit(b, "kunn") }

func BenchmarkFit_rp3beta(b *testing.B) { benchFit(b, "rp3beta") }

// BenchmarkFit_ease is the dense closed form over the 1,700 items (λ =
// DefaultEASELambda); BenchmarkFit_easeSparse the sparse variant with
// k_max = 100, forced by the dense limit 0.
func BenchmarkFit_ease(b *testing.B) { benchFit(b, "ease") }
func BenchmarkFit_easeSparse(b *testing.B) {
	b.Setenv(EnvEASEMaxDense, "0")
	benchFit(b, "ease")
}

func BenchmarkScore_ease(b *testing.B)    { benchScore(b, "ease") }
func BenchmarkScore_rp3beta(b *testing.B) { benchScore(b, "rp3beta") }
