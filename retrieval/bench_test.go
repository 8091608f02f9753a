package retrieval

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"
)

// BenchmarkSearchExact measures one exact top-10 query over n projected items
// of dimension m (docs/design.md#retrieval: exact search for small catalogues).
func BenchmarkSearchExact(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		for _, m := range []int{16, 32} {
			b.Run(fmt.Sprintf("n=%d/m=%d", n, m), func(b *testing.B) {
				rng := rand.New(rand.NewPCG(1, uint64(n)))
				ix, err := BuildIndex(randVectors(rng, n, m))
				if err != nil {
					b.Fatal(err)
				}
				qs := randVectors(rng, 64, m)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if got := ix.Search(qs[i%len(qs)], 10, nil); len(got) != 10 {
						b.Fatal(len(got))
					}
				}
			})
		}
	}
}

// BenchmarkSimilar is the similar-items latency of exact and HNSW search:
// one top-10 query by a stored item (GET /items/{id}/similar?by=content)
// over n items with m = 19 (ml-100k's genre features) and m = 32, on
// clustered generated vectors. Each approximate case reports the graph's
// build time and its recall@10 against the exact index over 500 queries.
// The n = 1,000,000 cases run only with RECSYS_BENCH_1M=1 (~1 GB, and the
// graph takes many minutes to build, so it uses efConstruction = 40
// instead of the default 100).
func BenchmarkSimilar(b *testing.B) {
	sizes := []int{1_682, 100_000}
	if os.Getenv("RECSYS_BENCH_1M") != "" {
		sizes = append(sizes, 1_000_000)
	}
	for _, n := range sizes {
		for _, m := range []int{19, 32} {
			rng := rand.New(rand.NewPCG(11, uint64(n*m)))
			ix, err := BuildIndex(clusteredVectors(rng, n, m, 100))
			if err != nil {
				b.Fatal(err)
			}
			var h *HNSW
			var buildSecs, recall float64
			ids := make([]int, 500)
			for i := range ids {
				ids[i] = rng.IntN(n)
			}
			b.Run(fmt.Sprintf("exact/n=%d/m=%d", n, m), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					if got := ix.SearchID(ids[i%len(ids)], 10, nil); len(got) != 10 {
						b.Fatal(len(got))
					}
				}
			})
			b.Run(fmt.Sprintf("hnsw/n=%d/m=%d", n, m), func(b *testing.B) {
				if h == nil {
					t0 := time.Now()
					opt := HNSWOptions{Seed: 1}
					if n >= 1_000_000 {
						opt.EfConstruction = 40
					}
					if h, err = BuildHNSW(ix, opt); err != nil {
						b.Fatal(err)
					}
					buildSecs = time.Since(t0).Seconds()
					b.ResetTimer()
				}
				for i := 0; i < b.N; i++ {
					if got := h.SearchID(ids[i%len(ids)], 10, nil); len(got) != 10 {
						b.Fatal(len(got))
					}
				}
				b.StopTimer()
				if recall > 0 {
					b.ReportMetric(recall, "recall@10")
					b.ReportMetric(buildSecs, "build-s")
					return
				}
				hit := 0
				for _, id := range ids {
					want := map[int]bool{}
					for _, nb := range ix.SearchID(id, 10, nil) {
						want[nb.ID] = true
					}
					for _, nb := range h.SearchID(id, 10, nil) {
						if want[nb.ID] {
							hit++
						}
					}
				}
				recall = float64(hit) / float64(10*len(ids))
				b.ReportMetric(recall, "recall@10")
				b.ReportMetric(buildSecs, "build-s")
			})
		}
	}
}

// BenchmarkBuildHNSW is the time to build the HNSW graph of n clustered
// vectors of dimension 16 (the content model's projected dimension at 16
// item features: FRML's rank is min(features, 32)), with the default
// options, reported per insert, and the graph's recall@10 against the
// exact index over 500 queries by stored item. The n = 1,000,000 case
// runs only with RECSYS_BENCH_1M=1. RECSYS_BENCH_HNSW_WORKERS sets
// HNSWOptions.Workers (default 1).
func BenchmarkBuildHNSW(b *testing.B) {
	sizes := []int{100_000}
	if os.Getenv("RECSYS_BENCH_1M") != "" {
		sizes = append(sizes, 1_000_000)
	}
	for _, n := range sizes {
		b.Run(fmt.Sprintf("n=%d/m=16", n), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(13, uint64(n)))
			ix, err := BuildIndex(clusteredVectors(rng, n, 16, 50))
			if err != nil {
				b.Fatal(err)
			}
			opt := benchHNSWOptions(b)
			var h *HNSW
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if h, err = BuildHNSW(ix, opt); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/float64(n), "µs/insert")
			hit := 0
			for q := 0; q < 500; q++ {
				id := rng.IntN(n)
				want := map[int]bool{}
				for _, nb := range ix.SearchID(id, 10, nil) {
					want[nb.ID] = true
				}
				for _, nb := range h.SearchID(id, 10, nil) {
					if want[nb.ID] {
						hit++
					}
				}
			}
			b.ReportMetric(float64(hit)/5000, "recall@10")
		})
	}
}

func benchHNSWOptions(b *testing.B) HNSWOptions {
	opt := HNSWOptions{Seed: 1}
	if w := os.Getenv("RECSYS_BENCH_HNSW_WORKERS"); w != "" {
		var err error
		if opt.Workers, err = strconv.Atoi(w); err != nil {
			b.Fatalf("RECSYS_BENCH_HNSW_WORKERS: %v", err)
		}
	}
	if e := os.Getenv("RECSYS_BENCH_HNSW_EFC"); e != "" {
		opt.EfConstruction, _ = strconv.Atoi(e)
	}
	return opt
}
