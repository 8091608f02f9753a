package recsys

import (
	"context"
	"slices"
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

// BenchmarkTopN_item compares the two ways an item-based model answers a
// top-10 request on a skewed catalogue (10,000 users, 4,000 items, 80
// positives each, k = 200): scoring every item then selecting (full), and
// RankTop, which scores only the blocks that can hold the answer (ranked).
func BenchmarkTopN_item(b *testing.B) {
	x := generated(b, 43, 10000, 4000, 80)
	pop := x.Popularity()
	for _, name := range []string{"itemknn", "kunn-i"} {
		m, _ := New(name)
		if err := m.Fit(context.Background(), x, Params{K: 200}); err != nil {
			b.Fatal(err)
		}
		scores := make([]float64, x.Items())
		for _, how := range []string{"full", "ranked"} {
			b.Run(name+"/"+how, func(b *testing.B) {
				u := 0
				for b.Loop() {
					h := x.Row(u % x.Users())
					skip := func(i uint32) bool { _, ok := slices.BinarySearch(h, i); return ok }
					if how == "full" {
						fullTopN(m, h, pop, skip, 10, scores)
					} else {
						m.(TopRanker).RankTop(h, pop, skip, 10, scores)
					}
					u++
				}
			})
		}
	}
}
