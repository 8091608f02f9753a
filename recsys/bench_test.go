package recsys

import (
	"context"
	"slices"
	"testing"

	"github.com/recsys-engine/recsys/recsys/internal/synth"
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

// BenchmarkTopN_item compares the two ways an item-based model answers a
// top-10 request, k = 200: scoring every item then selecting (full), and
// RankTop, which scores only the blocks that can hold the answer (ranked).
// "zipf" has popularity and no taste (the shape of `recsys scale`: 10,000
// users × 80 items drawn by a Zipf law from 4,000), where scores follow
// popularity and the bounds prune; "clusters" has 8 taste clusters (the
// generator of the other benchmarks), where they prune little.
func BenchmarkTopN_item(b *testing.B) {
	for _, data := range []struct {
		name string
		x    *Matrix
	}{{"zipf", zipfMatrix(b, 44, 10000, 4000, 80)}, {"clusters", generated(b, 43, 10000, 4000, 80)}} {
		x := data.x
		pop := x.Popularity()
		for _, name := range []string{"itemknn", "kunn-i"} {
			m, _ := New(name)
			if err := m.Fit(context.Background(), x, Params{K: 200}); err != nil {
				b.Fatal(err)
			}
			scores := make([]float64, x.Items())
			for _, how := range []string{"full", "ranked"} {
				b.Run(data.name+"/"+name+"/"+how, func(b *testing.B) {
					topNEachUser(b, x, func(h []uint32, skip func(uint32) bool) {
						if how == "full" {
							fullTopN(m, h, pop, skip, 10, scores)
						} else {
							m.(TopRanker).RankTop(h, pop, skip, 10, scores)
						}
					})
				})
			}
		}
	}
}

// BenchmarkTopN_item20M is the ranked path of BenchmarkTopN_item at the
// item count of `recsys scale`'s 20M-event database (27,000 items, so 106
// blocks of 256): 20,000 users × 143 items drawn by the Zipf law, k = 200,
// a top-10 request for each user in turn with its own items filtered.
func BenchmarkTopN_item20M(b *testing.B) {
	x := zipfMatrix(b, 45, 20000, 27000, 143)
	pop := x.Popularity()
	for _, name := range []string{"itemknn", "kunn-i"} {
		m, _ := New(name)
		if err := m.Fit(context.Background(), x, Params{K: 200}); err != nil {
			b.Fatal(err)
		}
		scores := make([]float64, x.Items())
		b.Run(name, func(b *testing.B) {
			topNEachUser(b, x, func(h []uint32, skip func(uint32) bool) {
				m.(TopRanker).RankTop(h, pop, skip, 10, scores)
			})
		})
	}
}

// zipfMatrix draws perUser distinct items for each of m users from a Zipf
// law over n items (synth.Zipf): popularity, no taste.
func zipfMatrix(tb testing.TB, seed uint64, m, n, perUser int) *Matrix {
	tb.Helper()
	var pairs []Pair
	synth.Zipf(seed, m, n, perUser, func(u, i uint32) { pairs = append(pairs, Pair{User: u, Item: i}) })
	x, err := NewMatrix(m, n, pairs)
	if err != nil {
		tb.Fatal(err)
	}
	return x
}

// drawnMatrix gives each of m users count() distinct items of n, each
// drawn by item().
func drawnMatrix(tb testing.TB, m, n int, count, item func() int) *Matrix {
	tb.Helper()
	var pairs []Pair
	seen := map[int]bool{}
	for u := range m {
		clear(seen)
		for c := count(); len(seen) < c; {
			if i := item(); !seen[i] {
				seen[i] = true
				pairs = append(pairs, Pair{User: uint32(u), Item: uint32(i)})
			}
		}
	}
	x, err := NewMatrix(m, n, pairs)
	if err != nil {
		tb.Fatal(err)
	}
	return x
}

// BenchmarkFitGrid fits a grid at once (Kind.FitGrid) and one candidate at
// a time: the sparse EASE's λ grid of the service (one Gram count per
// item against one per item and λ) and RP3β's k × β grid (one walk per
// item against one per item and candidate).
func BenchmarkFitGrid(b *testing.B) {
	x := benchMatrix(b)
	var ease []Params
	for _, l := range []float64{100, 300, 1000, 3000} {
		ease = append(ease, Params{K: 100, Extra: map[string]float64{"lambda": l, "max_dense": 0}})
	}
	grids := []struct {
		name  string
		cands []Params
	}{{"ease", ease}, {"rp3beta", rp3Candidates(Grid{K: []int{10, 20, 50, 100}}, Caps{Items: x.Items()})}}
	for _, g := range grids {
		kind, _ := KindOf(g.name)
		b.Run(g.name+"/grid", func(b *testing.B) {
			for b.Loop() {
				fitted, err := kind.FitGrid(context.Background(), x, g.cands)
				if err != nil || len(fitted) != len(g.cands) {
					b.Fatal(err, len(fitted))
				}
				for _, f := range fitted {
					f()
				}
			}
		})
		b.Run(g.name+"/one-by-one", func(b *testing.B) {
			for b.Loop() {
				for _, p := range g.cands {
					if err := kind.New().Fit(context.Background(), x, p); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// topNEachUser runs query for each user of x in turn, its row as the
// history and its items filtered, until the benchmark stops.
func topNEachUser(b *testing.B, x *Matrix, query func(h []uint32, skip func(uint32) bool)) {
	u := 0
	for b.Loop() {
		h := x.Row(u % x.Users())
		query(h, func(i uint32) bool { _, ok := slices.BinarySearch(h, i); return ok })
		u++
	}
}

// BenchmarkUserSideSearch finds KNN(u) at k = 200 of 200 training users of
// a matrix of `recsys scale`'s shape (30,000 Pareto users with 143 items
// on average over 27,000 Zipf items, 4.3M events), by the sparse and the
// dense accumulation, cosine and KUNN, and as search picks (the cosine by
// popular bits for all but the lightest histories here).
func BenchmarkUserSideSearch(b *testing.B) {
	x := scaleMatrix(b, 46, 30000, 27000, 143)
	for _, sim := range []string{SimCosine, SimKUNN} {
		s := newUserSide(x, 200, sim == SimKUNN)
		sc := s.pool.Get().(*userScratch)
		for _, dense := range []bool{false, true} {
			mode := "sparse"
			if dense {
				mode = "dense"
			}
			b.Run(sim+"/"+mode, func(b *testing.B) {
				for b.Loop() {
					for u := 0; u < 30000; u += 150 {
						s.searchMode(u, x.Row(u), 200, sc, dense)
					}
				}
			})
		}
		b.Run(sim+"/search", func(b *testing.B) {
			for b.Loop() {
				for u := 0; u < 30000; u += 150 {
					s.search(u, x.Row(u), 200, sc)
				}
			}
		})
	}
}

// BenchmarkItemCosineKNNScale computes every item's cosine KNN at k = 200
// on a matrix of `recsys scale`'s shape with 10,000 users (1.4M events),
// as itemknn, kunn-i and the FEBR item sides do.
func BenchmarkItemCosineKNNScale(b *testing.B) {
	x := scaleMatrix(b, 47, 10000, 27000, 143)
	for b.Loop() {
		if _, err := ItemCosineKNN(context.Background(), x, 200, nil); err != nil {
			b.Fatal(err)
		}
	}
}
