package storage

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/recsys-engine/recsys/api"
)

// benchEvents returns n view events of users drawn from 10,000 and items
// from 2,000 with a skew towards small indices, like real popularity.
func benchEvents(rng *rand.Rand, n int) []api.Interaction {
	evs := make([]api.Interaction, n)
	for k := range evs {
		u := rng.IntN(10000)
		i := int(2000 * rng.Float64() * rng.Float64())
		evs[k] = api.Interaction{UserID: fmt.Sprintf("u%d", u), ItemID: fmt.Sprintf("i%d", i), Type: "view"}
	}
	return evs
}

// BenchmarkStore_AddInteractions measures one durable write (one commit and
// fsync) of a batch of 1, 100 or 1,000 events into a store that already
// holds 100,000 events; events/s is the batch size over the time per op.
func BenchmarkStore_AddInteractions(b *testing.B) {
	for _, size := range []int{1, 100, 1000} {
		b.Run(fmt.Sprintf("batch=%d", size), func(b *testing.B) {
			s := mustOpenStore(b)
			rng := rand.New(rand.NewPCG(1, uint64(size)))
			for k := 0; k < 10; k++ {
				mustAdd(b, s, benchEvents(rng, 10000)...)
			}
			batches := make([][]api.Interaction, 64)
			for k := range batches {
				batches[k] = benchEvents(rng, size)
			}
			ctx := context.Background()
			b.ResetTimer()
			k := 0
			for b.Loop() {
				if _, err := s.AddInteractions(ctx, batches[k%len(batches)]); err != nil {
					b.Fatal(err)
				}
				k++
			}
			b.ReportMetric(float64(size)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// BenchmarkStore_AddInteractionsParallel is the server's situation: many
// clients writing batches at once, coalesced by db.Batch into shared
// commits.
func BenchmarkStore_AddInteractionsParallel(b *testing.B) {
	for _, size := range []int{1, 100} {
		b.Run(fmt.Sprintf("batch=%d", size), func(b *testing.B) {
			s := mustOpenStore(b)
			rng := rand.New(rand.NewPCG(2, uint64(size)))
			mustAdd(b, s, benchEvents(rng, 10000)...)
			batches := make([][]api.Interaction, 64)
			for k := range batches {
				batches[k] = benchEvents(rng, size)
			}
			ctx := context.Background()
			b.SetParallelism(8)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				k := 0
				for pb.Next() {
					if _, err := s.AddInteractions(ctx, batches[k%len(batches)]); err != nil {
						b.Error(err)
						return
					}
					k++
				}
			})
			b.ReportMetric(float64(size)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// BenchmarkStore_Profile reads the live history of one user with about 60
// pairs: the store read on every recommendation request.
func BenchmarkStore_Profile(b *testing.B) {
	s := mustOpenStore(b)
	rng := rand.New(rand.NewPCG(3, 4))
	var evs []api.Interaction
	for u := 0; u < 1000; u++ {
		for k := 0; k < 60; k++ {
			evs = append(evs, api.Interaction{UserID: fmt.Sprintf("u%d", u), ItemID: fmt.Sprintf("i%d", rng.IntN(1700)), Type: "view"})
		}
	}
	for k := 0; k < len(evs); k += api.MaxBatch {
		mustAdd(b, s, evs[k:min(k+api.MaxBatch, len(evs))]...)
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	u := 0
	for b.Loop() {
		p, err := s.Profile(ctx, fmt.Sprintf("u%d", u%1000))
		if err != nil || len(p.Consumed) == 0 {
			b.Fatal(err, len(p.Consumed))
		}
		u++
	}
}

// BenchmarkBulkLoad builds a database of 1M events (50,000 users, 5,000
// items, both skewed, times over a year) with BulkLoad, from events
// already in memory: the loader's own cost, without parsing a file.
// events/s is the events over the time per load.
func BenchmarkBulkLoad(b *testing.B) {
	const n = 1_000_000
	rng := rand.New(rand.NewPCG(5, 6))
	users, items := make([]string, 50000), make([]string, 5000)
	for k := range users {
		users[k] = fmt.Sprintf("u%d", k)
	}
	for k := range items {
		items[k] = fmt.Sprintf("i%d", k)
	}
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	evs := make([]api.Interaction, n)
	for k := range evs {
		evs[k] = api.Interaction{UserID: users[int(float64(len(users))*rng.Float64()*rng.Float64())],
			ItemID: items[int(float64(len(items))*rng.Float64()*rng.Float64())], Type: "view",
			Timestamp: start.Add(time.Duration(rng.Int64N(int64(365 * 24 * time.Hour))))}
	}
	src := BulkSource{Events: func(add func(api.Interaction) error) error {
		for _, e := range evs {
			if err := add(e); err != nil {
				return err
			}
		}
		return nil
	}}
	path := filepath.Join(b.TempDir(), "bulk.db")
	for b.Loop() {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			b.Fatal(err)
		}
		if _, err := BulkLoad(path, BulkOptions{}, src); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(n*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkStore_Ingest is live ingest at scale: a database of 1M events
// (20,000 users, 5,000 items, both skewed; bulk loaded), then 8 concurrent
// writers of 1,000-event batches of the same users and items, each batch
// durable before it returns. path=log is the event log (group commit, the
// applier folding the tail into bbolt in the background); path=direct is
// the write path before it (one bbolt transaction per batch, coalesced by
// db.Batch). path=log-nofreelist is the event log with commits that leave
// bbolt's free-page list out (the setting before: a crash then costs a
// walk of the whole file at the next open). events/s counts acknowledged
// events; applied-events/s also waits, after the last batch, until the
// applier has caught up; cpu-µs/event is the process's CPU time per event.
func BenchmarkStore_Ingest(b *testing.B) {
	const stored, nUsers, nItems, batch = 1_000_000, 20_000, 5_000, 1000
	users, items := make([]string, nUsers), make([]string, nItems)
	for k := range users {
		users[k] = fmt.Sprintf("u%d", k)
	}
	for k := range items {
		items[k] = fmt.Sprintf("i%d", k)
	}
	draw := func(rng *rand.Rand) api.Interaction {
		return api.Interaction{UserID: users[int(nUsers*rng.Float64()*rng.Float64())],
			ItemID: items[int(nItems*rng.Float64()*rng.Float64())], Type: "view"}
	}
	rng := rand.New(rand.NewPCG(7, 8))
	src := BulkSource{Events: func(add func(api.Interaction) error) error {
		for range stored {
			if err := add(draw(rng)); err != nil {
				return err
			}
		}
		return nil
	}}
	base := filepath.Join(b.TempDir(), "base.db")
	if _, err := BulkLoad(base, BulkOptions{}, src); err != nil {
		b.Fatal(err)
	}
	batches := make([][]api.Interaction, 256)
	for k := range batches {
		batches[k] = make([]api.Interaction, batch)
		for j := range batches[k] {
			batches[k][j] = draw(rng)
		}
	}
	for _, path := range []string{"log", "log-nofreelist", "direct"} {
		b.Run("path="+path, func(b *testing.B) {
			file := filepath.Join(b.TempDir(), "db")
			raw, err := os.ReadFile(base)
			if err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(file, raw, 0o600); err != nil {
				b.Fatal(err)
			}
			if err := os.CopyFS(logDir(file), os.DirFS(logDir(base))); err != nil {
				b.Fatal(err)
			}
			s, err := Open(file, Options{direct: path == "direct", noFreelistSync: path == "log-nofreelist"})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			ctx := context.Background()
			var next atomic.Int64
			b.SetParallelism(4) // 8 writers on 2 cores
			cpu0 := processCPU(b)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := s.AddInteractions(ctx, batches[next.Add(1)%int64(len(batches))]); err != nil {
						b.Error(err)
						return
					}
				}
			})
			acked := b.Elapsed()
			if err := s.applyTail(); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			b.ReportMetric(batch*float64(b.N)/acked.Seconds(), "events/s")
			b.ReportMetric(batch*float64(b.N)/b.Elapsed().Seconds(), "applied-events/s")
			// CPU time is what a shared machine does not distort: the
			// process's user and system time per event, acknowledged and
			// applied.
			b.ReportMetric(float64((processCPU(b)-cpu0).Microseconds())/(batch*float64(b.N)), "cpu-µs/event")
		})
	}
}

// processCPU is the user and system CPU time this process has used.
func processCPU(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
