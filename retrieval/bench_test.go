package retrieval

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkSearchExact measures one exact top-10 query over n projected items
// of dimension m (SPEC.md §5: exact search for small catalogues).
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
