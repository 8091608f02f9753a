package postgres_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/storage/backend"
	"github.com/recsys-engine/recsys/storage/storagetest"
)

// The same benchmarks on both stores, so that one run compares them under
// the same load: go test -run x -bench 'Stores' ./storage/postgres. With
// RECSYS_TEST_POSTGRES naming a server started with fsync on
// (PGFSYNC=on .ci/postgres.sh start DIR), both make every commit durable.

var stores = []struct {
	name string
	open storagetest.Opener
}{{"bolt", storagetest.OpenBolt}, {"postgres", open}}

// benchEvents returns n view events of users drawn from 10,000 and items
// from 2,000, skewed towards small indices like real popularity (as the
// bbolt store's benchmarks).
func benchEvents(rng *rand.Rand, n int) []api.Interaction {
	evs := make([]api.Interaction, n)
	for k := range evs {
		u := rng.IntN(10000)
		i := int(2000 * rng.Float64() * rng.Float64())
		evs[k] = api.Interaction{UserID: fmt.Sprintf("u%d", u), ItemID: fmt.Sprintf("i%d", i), Type: "view"}
	}
	return evs
}

// filled opens a store holding n events (added 10,000 at a time) and
// returns it with 64 batches of 1,000 more.
func filled(b *testing.B, open storagetest.Opener, seed uint64, n int) (backend.Store, [][]api.Interaction) {
	s := open(b, storagetest.Options{})
	rng := rand.New(rand.NewPCG(seed, 1000))
	for k := 0; k < n; k += 10000 {
		storagetest.MustAdd(b, s, benchEvents(rng, min(10000, n-k))...)
	}
	batches := make([][]api.Interaction, 64)
	for k := range batches {
		batches[k] = benchEvents(rng, 1000)
	}
	return s, batches
}

// BenchmarkStores_Ingest1000 is one durable write of a 1,000-event batch
// into a store that holds 100,000 events; events/s is 1,000 over the time
// per write.
func BenchmarkStores_Ingest1000(b *testing.B) {
	for _, st := range stores {
		b.Run(st.name, func(b *testing.B) {
			s, batches := filled(b, st.open, 1, 100000)
			k := 0
			for b.Loop() {
				if _, err := s.AddInteractions(context.Background(), batches[k%len(batches)]); err != nil {
					b.Fatal(err)
				}
				k++
			}
			b.ReportMetric(1000*float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// BenchmarkStores_Ingest1000Parallel is four clients writing 1,000-event
// batches at once.
func BenchmarkStores_Ingest1000Parallel(b *testing.B) {
	for _, st := range stores {
		b.Run(st.name, func(b *testing.B) {
			s, batches := filled(b, st.open, 2, 100000)
			b.SetParallelism(2) // 2 × GOMAXPROCS goroutines
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				k := rand.IntN(len(batches))
				for pb.Next() {
					if _, err := s.AddInteractions(context.Background(), batches[k%len(batches)]); err != nil {
						b.Error(err)
						return
					}
					k++
				}
			})
			b.ReportMetric(1000*float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// BenchmarkStores_Snapshot reads the training snapshot of a store holding
// 1,000,000 events (952,252 distinct positive pairs).
func BenchmarkStores_Snapshot(b *testing.B) {
	for _, st := range stores {
		b.Run(st.name, func(b *testing.B) {
			s, _ := filled(b, st.open, 3, 1000000)
			var pairs int
			for b.Loop() {
				snap, err := s.Snapshot(context.Background())
				if err != nil {
					b.Fatal(err)
				}
				pairs = len(snap.Users)
			}
			b.ReportMetric(float64(pairs), "pairs")
			b.ReportMetric(float64(pairs)*float64(b.N)/b.Elapsed().Seconds(), "pairs/s")
		})
	}
}
