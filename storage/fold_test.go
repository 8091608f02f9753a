package storage

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/storage/bolttest"
)

// userReads is what the store answers about one user: the reads that fold
// that user's tail events over the stored records.
func userReads(tb testing.TB, st *Store, id string) map[string]any {
	tb.Helper()
	ctx := context.Background()
	out := map[string]any{}
	u, err := st.User(ctx, id)
	out["user"] = fmt.Sprintf("%+v %v", u, err)
	pr, err := st.Profile(ctx, id)
	out["profile"] = fmt.Sprintf("%+v %v", pr, err)
	h, next, err := st.History(ctx, id, api.Page{Limit: 1000})
	out["history"] = fmt.Sprintf("%+v %q %v", h, next, err)
	return out
}

// openLogAndDirect opens a store on the event log with no applier and one
// on the direct path, in a new folder.
func openLogAndDirect(tb testing.TB) (lg, direct *Store) {
	dir := tb.TempDir()
	return openLogStore(tb, filepath.Join(dir, "log.db")), openDirectStore(tb, filepath.Join(dir, "direct.db"))
}

// TestStore_foldAtApplyEqualsDirect: the tail folded at apply time, in key
// order, gives the same file as the direct path (one event after the other
// into bbolt), key by key, for a stream whose users and pairs repeat within
// batches, across batches and across generations; with reads of the
// aggregates folding part of the current generation at random points (the
// applier then folds the rest), generations frozen and applied at random
// points. Along the way, with events in the tail, every read equals the
// direct path's: each user's record, profile and history, the counters,
// the per-day activity, the catalogue's popularity.
func TestStore_foldAtApplyEqualsDirect(t *testing.T) {
	for _, seed := range []uint64{21, 22, 23} {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) { foldAtApplyRun(t, seed) })
	}
}

func foldAtApplyRun(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 3))
	s := genBulkStream(seed, 6000)
	users := streamUsers(s.events)
	lg, direct := openLogAndDirect(t)
	ctx := context.Background()
	tailSeen := 0
	for lo := 0; lo < len(s.events); {
		hi := min(lo+1+rng.IntN(200), len(s.events))
		mustAdd(t, lg, s.events[lo:hi]...)
		mustAdd(t, direct, s.events[lo:hi]...)
		lo = hi
		switch r := rng.IntN(12); {
		case r < 3: // an aggregate read folds the tail so far
			if a, b := mustCounts(t, lg), mustCounts(t, direct); a != b {
				t.Fatalf("at %d: counts %+v vs %+v", lo, a, b)
			}
		case r < 5:
			lg.mu.Lock()
			lg.freezeLocked()
			lg.mu.Unlock()
		case r < 6:
			if err := lg.applyTail(); err != nil {
				t.Fatal(err)
			}
		case r < 8: // the applier's step: the frozen generations, not the current one
			applyFrozenOnly(t, lg)
		}
		if lg.TailEvents() == 0 {
			continue
		}
		tailSeen++
		id := users[rng.IntN(len(users))]
		compareReads(t, fmt.Sprintf("at %d: user %s", lo, id), userReads(t, lg, id), userReads(t, direct, id))
		if rng.IntN(4) == 0 {
			a, err1 := lg.Activity(ctx, 1000)
			b, err2 := direct.Activity(ctx, 1000)
			if err1 != nil || err2 != nil || fmt.Sprint(a) != fmt.Sprint(b) {
				t.Fatalf("at %d: activity %v %v vs %v %v", lo, a, err1, b, err2)
			}
		}
	}
	if tailSeen < 10 {
		t.Fatalf("reads met an unapplied tail only %d times", tailSeen)
	}
	if lg.TailEvents() == 0 {
		t.Fatal("the stream ended with no tail to read")
	}
	compareReads(t, "tail vs direct", tailReads(t, lg, users), tailReads(t, direct, users))
	for _, d := range bolttest.Diff(dumpDB(t, lg), dumpDB(t, direct), nil) {
		t.Error(d)
	}
	compareReads(t, "applied vs direct", tailReads(t, lg, users), tailReads(t, direct, users))
}

// applyFrozenOnly applies the frozen generations of st and drops them, as
// the applier does while appends go on into the current one.
func applyFrozenOnly(tb testing.TB, st *Store) {
	tb.Helper()
	st.mu.Lock()
	defer st.mu.Unlock()
	frozen := st.gens[:len(st.gens)-1]
	if len(frozen) == 0 {
		return
	}
	if err := st.db.Update(func(tx *bolt.Tx) error { return st.applyFrozen(tx, frozen) }); err != nil {
		tb.Fatal(err)
	}
	var n int64
	for _, g := range frozen {
		n += g.events
	}
	st.tailMu.Lock()
	st.gens = st.gens[len(frozen):]
	st.tailMu.Unlock()
	st.tailEvents -= n
}

// TestStore_appendAndReplayDoNoLookups: acknowledging a batch and replaying
// the log at open read nothing from bbolt's users and pairs (the fold does,
// later); the first read of an aggregate does.
func TestStore_appendAndReplayDoNoLookups(t *testing.T) {
	s := genBulkStream(24, 3000)
	path := filepath.Join(t.TempDir(), "log.db")
	lg := openLogStore(t, path)
	feed(t, s.events[:1500], 25, lg)
	if err := lg.applyTail(); err != nil {
		t.Fatal(err)
	}
	var lookups atomic.Int64
	foldLookups = func() { lookups.Add(1) }
	t.Cleanup(func() { foldLookups = nil })
	feed(t, s.events[1500:], 26, lg) // users and pairs bbolt holds
	if n := lookups.Load(); n != 0 {
		t.Fatalf("appending made %d bbolt look-ups", n)
	}
	crash(t, lg)
	lg = openLogStore(t, path)
	if n, want := lg.TailEvents(), int64(1500); n != want {
		t.Fatalf("%d events replayed, want %d", n, want)
	}
	if n := lookups.Load(); n != 0 {
		t.Fatalf("replaying made %d bbolt look-ups", n)
	}
	mustCounts(t, lg)
	if lookups.Load() == 0 {
		t.Fatal("the counters were read with no look-up: the hook counts nothing")
	}
}

// TestStore_foldConcurrentReads: reads of the aggregates folding the tail
// while appends go on and the applier folds and applies every millisecond
// never lose an acknowledged event nor count one twice: each read's events
// lie between those acknowledged before it began and those sent by its
// end, its users and pairs never decrease, and the file ends equal to the
// direct path's.
func TestStore_foldConcurrentReads(t *testing.T) {
	old := applyEvery
	applyEvery = time.Millisecond
	t.Cleanup(func() { applyEvery = old })
	s := genBulkStream(27, 8000)
	dir := t.TempDir()
	lg := openTestStore(t, filepath.Join(dir, "log.db"), Options{Now: fixedClock})
	direct := openDirectStore(t, filepath.Join(dir, "direct.db"))
	var sent, acked atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var reads atomic.Int64
	for r := range 2 {
		wg.Go(func() {
			var last api.Counts
			for {
				select {
				case <-stop:
					return
				default:
				}
				lo := acked.Load()
				c, err := lg.Counts(context.Background())
				hi := sent.Load()
				if err != nil {
					t.Error(err)
					return
				}
				if c.Events < lo || c.Events > hi {
					t.Errorf("reader %d: %d events, acknowledged %d before the read, %d sent by its end", r, c.Events, lo, hi)
					return
				}
				if c.Users < last.Users || c.Interactions < last.Interactions {
					t.Errorf("reader %d: %+v after %+v", r, c, last)
					return
				}
				last = c
				if r == 1 {
					if _, err := lg.Catalogue(context.Background()); err != nil {
						t.Error(err)
						return
					}
				}
				reads.Add(1)
			}
		})
	}
	rng := rand.New(rand.NewPCG(27, 1))
	for lo := 0; lo < len(s.events); {
		hi := min(lo+1+rng.IntN(60), len(s.events))
		sent.Add(int64(hi - lo))
		mustAdd(t, lg, s.events[lo:hi]...)
		acked.Add(int64(hi - lo))
		mustAdd(t, direct, s.events[lo:hi]...)
		lo = hi
	}
	close(stop)
	wg.Wait()
	if reads.Load() < 10 {
		t.Fatalf("only %d reads ran alongside the appends", reads.Load())
	}
	users := streamUsers(s.events)
	compareReads(t, "after", tailReads(t, lg, users), tailReads(t, direct, users))
	for _, d := range bolttest.Diff(dumpDB(t, lg), dumpDB(t, direct), nil) {
		t.Error(d)
	}
}
