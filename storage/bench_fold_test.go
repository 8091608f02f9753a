package storage

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"testing"

	"github.com/recsys-engine/recsys/api"
)

// BenchmarkStore_TailFold isolates the two halves of live ingest for
// updates scattered uniformly over every user of the store (the worst case
// for the B-trees, as --ingest-existing-users): 1M stored events of 100,000
// users and 5,000 items (bulk loaded), then per op 256 batches of 1,000
// events of those users and items appended by 8 writers, each batch durable
// before it returns, with no applier running, then the whole tail applied
// in one transaction. ack-cpu-µs/event is the process's CPU time per event
// during the appends; apply-cpu-µs/event during the apply (the fold, where
// it happens then, and the bbolt writes). With filter=true the store has the
// Bloom filter over its stored pairs that a store with its applier builds at
// open (pairfilter.go); without it every new pair is looked up in bbolt.
func BenchmarkStore_TailFold(b *testing.B) {
	for _, filter := range []bool{false, true} {
		b.Run(fmt.Sprintf("filter=%v", filter), func(b *testing.B) { benchTailFold(b, filter) })
	}
}

func benchTailFold(b *testing.B, filter bool) {
	const stored, nUsers, nItems, batch, batches = 1_000_000, 100_000, 5_000, 1000, 256
	rng := rand.New(rand.NewPCG(9, 10))
	draw := func() api.Interaction {
		return api.Interaction{UserID: fmt.Sprintf("u%d", rng.IntN(nUsers)), ItemID: fmt.Sprintf("i%d", rng.IntN(nItems)),
			Type: "view"}
	}
	src := BulkSource{Events: func(add func(api.Interaction) error) error {
		for range stored {
			if err := add(draw()); err != nil {
				return err
			}
		}
		return nil
	}}
	path := filepath.Join(b.TempDir(), "db")
	if _, err := BulkLoad(path, BulkOptions{}, src); err != nil {
		b.Fatal(err)
	}
	s, err := Open(path, Options{noApplier: true})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if filter {
		s.filter = &pairFilter{}
		s.filter.grow(s.db, stored, s.stop)
		s.filter.wg.Wait()
	}
	ctx := context.Background()
	var ack, apply float64
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		work := make([][]api.Interaction, batches)
		for k := range work {
			work[k] = make([]api.Interaction, batch)
			for j := range work[k] {
				work[k][j] = draw()
			}
		}
		b.StartTimer()
		cpu0 := processCPU(b)
		var wg sync.WaitGroup
		for w := range 8 {
			wg.Go(func() {
				for k := w; k < batches; k += 8 {
					if _, err := s.AddInteractions(ctx, work[k]); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		cpu1 := processCPU(b)
		if err := s.applyTail(); err != nil {
			b.Fatal(err)
		}
		cpu2 := processCPU(b)
		ack += float64((cpu1 - cpu0).Microseconds())
		apply += float64((cpu2 - cpu1).Microseconds())
	}
	n := float64(b.N) * batch * batches
	b.ReportMetric(ack/n, "ack-cpu-µs/event")
	b.ReportMetric(apply/n, "apply-cpu-µs/event")
	b.ReportMetric(n/b.Elapsed().Seconds(), "applied-events/s")
}
