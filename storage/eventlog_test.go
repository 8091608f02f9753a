package storage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/storage/bolttest"
)

// openLogStore opens a store on the event log whose tail stays unapplied
// until something applies it.
func openLogStore(tb testing.TB, path string) *Store {
	return openTestStore(tb, path, Options{Now: fixedClock, noApplier: true})
}

// openDirectStore opens a store that writes events straight into bbolt,
// the path before the event log.
func openDirectStore(tb testing.TB, path string) *Store {
	return openTestStore(tb, path, Options{Now: fixedClock, direct: true})
}

func openTestStore(tb testing.TB, path string, opts Options) *Store {
	tb.Helper()
	st, err := Open(path, opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	return st
}

// crash stops st as a kill would: no apply, the log and the file closed
// as they are (every acknowledged record is already fsynced).
func crash(tb testing.TB, st *Store) {
	tb.Helper()
	st.mu.Lock()
	if st.closed {
		st.mu.Unlock()
		return
	}
	st.closed = true
	st.room.Broadcast()
	st.mu.Unlock()
	close(st.stop)
	<-st.applierDone
	if err := st.log.close(); err != nil {
		tb.Fatal(err)
	}
	if err := st.db.Close(); err != nil {
		tb.Fatal(err)
	}
}

// feed adds the events of s to every store in the same batches.
func feed(tb testing.TB, evs []api.Interaction, seed uint64, stores ...*Store) {
	tb.Helper()
	rng := rand.New(rand.NewPCG(seed, 9))
	for lo := 0; lo < len(evs); {
		hi := min(lo+1+rng.IntN(300), len(evs))
		for _, st := range stores {
			mustAdd(tb, st, evs[lo:hi]...)
		}
		lo = hi
	}
}

// tailReads is every read that merges the tail, none of which applies it.
func tailReads(tb testing.TB, st *Store, users []string) map[string]any {
	tb.Helper()
	ctx := context.Background()
	out := map[string]any{"counts": mustCounts(tb, st)}
	add := func(name string, v any, err error) {
		tb.Helper()
		if err != nil && api.ErrorCode(err) != api.CodeNotFound {
			tb.Fatalf("%s: %v", name, err)
		}
		out[name] = fmt.Sprintf("%+v %v", v, api.ErrorCode(err))
	}
	act, err := st.Activity(ctx, 1000)
	add("activity", act, err)
	cat, err := st.Catalogue(ctx)
	add("catalogue", cat, err)
	idx := make([]uint32, len(cat.ItemIDs))
	for k := range idx {
		idx[k] = uint32(k)
	}
	inter, err := st.ItemsInteracted(ctx, idx)
	add("interacted", inter, err)
	for _, id := range cat.ItemIDs {
		it, err := st.Item(ctx, id)
		add("item "+id, it, err)
	}
	for _, id := range users {
		u, err := st.User(ctx, id)
		add("user "+id, u, err)
		pr, err := st.Profile(ctx, id)
		add("profile "+id, pr, err)
		var pages [][]api.HistoryEntry
		cursor := ""
		for {
			h, next, err := st.History(ctx, id, api.Page{Limit: 3, Cursor: cursor})
			if err != nil {
				add("history "+id, nil, err)
				break
			}
			pages = append(pages, h)
			if next == "" {
				break
			}
			cursor = next
		}
		out["history "+id] = fmt.Sprintf("%+v", pages)
	}
	return out
}

func compareReads(t *testing.T, what string, a, b map[string]any) {
	t.Helper()
	if len(a) != len(b) {
		t.Errorf("%s: %d reads vs %d", what, len(a), len(b))
	}
	n := 0
	for name, va := range a {
		if vb := b[name]; !reflect.DeepEqual(va, vb) {
			if n++; n <= 5 {
				t.Errorf("%s: %s:\n%v\nvs\n%v", what, name, va, vb)
			}
		}
	}
}

func streamUsers(evs []api.Interaction) []string {
	seen := map[string]bool{}
	var out []string
	for _, e := range evs {
		if !seen[e.UserID] {
			seen[e.UserID] = true
			out = append(out, e.UserID)
		}
	}
	return append(out, "nobody")
}

// TestStore_logEqualsDirect: the same items and events through the event
// log and through the direct write path give the same file, bucket by
// bucket and key by key (sequences included), and the same answer to
// every read, whether the reads merge an unapplied tail or not.
func TestStore_logEqualsDirect(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			s := genBulkStream(seed, 4000)
			lg, direct := openLogAndDirect(t)
			ctx := context.Background()
			half := len(s.events) / 2
			// Items first seen in events, then item records: PutItems
			// applies the tail and must keep the indices ingest gave.
			feed(t, s.events[:half], seed, lg, direct)
			for _, st := range []*Store{lg, direct} {
				if err := st.PutItems(ctx, s.items); err != nil {
					t.Fatal(err)
				}
			}
			feed(t, s.events[half:], seed+1, lg, direct)
			if lg.TailEvents() == 0 {
				t.Fatal("the tail is empty: the test reads no merged tail")
			}
			users := streamUsers(s.events)
			compareReads(t, "tail vs direct", tailReads(t, lg, users), tailReads(t, direct, users))
			for _, d := range bolttest.Diff(dumpDB(t, lg), dumpDB(t, direct), nil) {
				t.Error(d)
			}
			if lg.TailEvents() != 0 {
				t.Fatalf("%d events left in the tail after an apply", lg.TailEvents())
			}
			compareReads(t, "applied vs direct", tailReads(t, lg, users), tailReads(t, direct, users))
			comparePublicReads(t, lg, direct)
		})
	}
}

// TestStore_tailReadsEqualApplied: a read right after a POST equals the
// same read once the tail is applied, for tails of several generations
// (the appender freezes a generation at genEvents).
func TestStore_tailReadsEqualApplied(t *testing.T) {
	s := genBulkStream(4, 3000)
	lg := openLogStore(t, filepath.Join(t.TempDir(), "log.db"))
	users := streamUsers(s.events)
	feed(t, s.events[:1000], 4, lg)
	if err := lg.applyTail(); err != nil {
		t.Fatal(err)
	}
	// Three generations: two frozen, one current.
	feed(t, s.events[1000:1600], 5, lg)
	lg.mu.Lock()
	lg.freezeLocked()
	lg.mu.Unlock()
	feed(t, s.events[1600:2200], 6, lg)
	lg.mu.Lock()
	lg.freezeLocked()
	lg.mu.Unlock()
	feed(t, s.events[2200:], 7, lg)
	if n := len(lg.gens); n != 3 {
		t.Fatalf("%d generations, want 3", n)
	}
	before := tailReads(t, lg, users)
	if err := lg.applyTail(); err != nil {
		t.Fatal(err)
	}
	compareReads(t, "tail vs applied", before, tailReads(t, lg, users))
}

// TestStore_replayAfterCrash: a crash with an unapplied tail loses no
// acknowledged event, and replaying the log is exact: a generation applied
// just before the crash (its position stored with it) is not applied a
// second time, and reopening again changes nothing.
func TestStore_replayAfterCrash(t *testing.T) {
	s := genBulkStream(7, 3000)
	dir := t.TempDir()
	path := filepath.Join(dir, "log.db")
	lg := openLogStore(t, path)
	direct := openDirectStore(t, filepath.Join(dir, "direct.db"))
	feed(t, s.events[:1000], 7, lg, direct)
	if err := lg.applyTail(); err != nil {
		t.Fatal(err)
	}
	feed(t, s.events[1000:2000], 8, lg, direct)
	// Apply the current generation as the applier does, but crash before
	// it is dropped from memory: the file has it, and the log says so.
	lg.mu.Lock()
	lg.freezeLocked()
	g := lg.gens[0]
	lg.mu.Unlock()
	if err := lg.db.Update(func(tx *bolt.Tx) error { return lg.applyFrozen(tx, []*tailGen{g}) }); err != nil {
		t.Fatal(err)
	}
	feed(t, s.events[2000:], 9, lg, direct)
	crash(t, lg)

	users := streamUsers(s.events)
	want := tailReads(t, direct, users)
	for round := range 2 {
		lg = openLogStore(t, path)
		// Open replays what the file lacks into the tail, and only that
		// (the applier, not started here, would apply it).
		if n, want := lg.TailEvents(), int64(len(s.events)-2000); n != want {
			t.Fatalf("round %d: %d events in the tail at open, want the %d after the applied generation", round, n, want)
		}
		compareReads(t, fmt.Sprintf("round %d: reopened vs direct", round), tailReads(t, lg, users), want)
		crash(t, lg)
	}
	lg = openLogStore(t, path)
	for _, d := range bolttest.Diff(dumpDB(t, lg), dumpDB(t, direct), nil) {
		t.Error(d)
	}
}

// TestEventLog_tornTail: whatever a crash left after the last whole record
// (part of a record, a record failing its checksum, zeros) is cut off at
// open; every record before it is replayed, and the log takes records
// again where it was cut.
func TestEventLog_tornTail(t *testing.T) {
	good := encodeRecord(nil, &logBatch{arrival: 1, events: []logEvent{{user: "z", item: "q", typ: "view", itemIdx: 99, ts: 5, bits: evNewItem | evPositive}}})
	badCRC := bytes.Clone(good)
	badCRC[len(badCRC)-1] ^= 0xff
	for _, tc := range []struct {
		name string
		tail []byte
	}{
		{"half a record", good[:len(good)/2]},
		{"a record head only", good[:logRecordHead]},
		{"a bad checksum", badCRC},
		{"zeros", make([]byte, 4096)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "log.db")
			lg := openLogStore(t, path)
			mustAdd(t, lg, ev("a", "x", "view"), ev("a", "y", "like"))
			mustAdd(t, lg, ev("b", "x", "purchase"))
			size := lg.LogBytes()
			crash(t, lg)
			segs, err := listSegments(logDir(path))
			if err != nil || len(segs) != 1 {
				t.Fatalf("segments %v, %v", segs, err)
			}
			f, err := os.OpenFile(segs[0].path, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.Write(tc.tail); err != nil {
				t.Fatal(err)
			}
			f.Close()

			lg = openLogStore(t, path)
			if got, want := mustCounts(t, lg), (api.Counts{Users: 2, Items: 2, Interactions: 3, Positives: 3, Events: 3}); got != want {
				t.Fatalf("counts after the torn tail %+v, want %+v", got, want)
			}
			if fi, err := os.Stat(segs[0].path); err != nil || fi.Size() != size {
				t.Fatalf("segment of %d bytes after open, want %d (cut at the last whole record): %v", fi.Size(), size, err)
			}
			mustAdd(t, lg, ev("c", "x", "view"))
			crash(t, lg)
			lg = openLogStore(t, path)
			if got := mustCounts(t, lg); got.Events != 4 || got.Users != 3 {
				t.Fatalf("counts after a record written behind the cut: %+v", got)
			}
		})
	}
}

// TestEventLog_segments: the log rolls over to new segments, and a replay
// that spans several of them restores every event.
func TestEventLog_segments(t *testing.T) {
	old := segmentBytes
	segmentBytes = 2048
	t.Cleanup(func() { segmentBytes = old })
	path := filepath.Join(t.TempDir(), "log.db")
	lg := openLogStore(t, path)
	for k := range 40 {
		evs := []api.Interaction{ev(fmt.Sprintf("u%d", k), "x", "view")}
		for j := range 19 {
			evs = append(evs, ev(fmt.Sprintf("u%d", k), fmt.Sprintf("i%d", (k+j)%7), "like"))
		}
		mustAdd(t, lg, evs...)
	}
	crash(t, lg)
	segs, err := listSegments(logDir(path))
	if err != nil || len(segs) < 5 {
		t.Fatalf("%d segments (%v), want several", len(segs), err)
	}
	lg = openLogStore(t, path)
	if got := mustCounts(t, lg); got.Events != 800 || got.Users != 40 || got.Items != 8 {
		t.Fatalf("after replaying %d segments: %+v", len(segs), got)
	}
}

// TestStore_deletesWithTail: deletes, catalogue writes and snapshots
// issued while the tail holds events act on every acknowledged event,
// exactly as on the direct path.
func TestStore_deletesWithTail(t *testing.T) {
	s := genBulkStream(11, 2000)
	dir := t.TempDir()
	lg, direct := openLogStore(t, filepath.Join(dir, "log.db")), openDirectStore(t, filepath.Join(dir, "direct.db"))
	ctx := context.Background()
	both := func(name string, fn func(st *Store) error) {
		t.Helper()
		for _, st := range []*Store{lg, direct} {
			if err := fn(st); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
	}
	feed(t, s.events[:500], 11, lg, direct)
	both("delete pair", func(st *Store) error { return st.DeleteInteraction(ctx, s.events[499].UserID, s.events[499].ItemID) })
	feed(t, s.events[500:1000], 12, lg, direct)
	both("delete user", func(st *Store) error { return st.DeleteUser(ctx, s.events[999].UserID) })
	feed(t, s.events[1000:1500], 13, lg, direct)
	both("delete item", func(st *Store) error { return st.DeleteItem(ctx, s.events[1499].ItemID) })
	feed(t, s.events[1500:], 14, lg, direct)
	both("patch item", func(st *Store) error {
		_, err := st.UpdateItem(ctx, s.events[1999].ItemID, func(it api.Item) (api.Item, error) {
			it.Labels = map[string]string{"title": "t"}
			return it, nil
		})
		return err
	})
	mustAdd(t, lg, ev("late", "i00", "view"))
	mustAdd(t, direct, ev("late", "i00", "view"))
	snap, err := lg.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := mustCounts(t, direct).Events; snap.Events != want {
		t.Fatalf("snapshot holds %d events, want %d", snap.Events, want)
	}
	users := streamUsers(s.events)
	compareReads(t, "log vs direct", tailReads(t, lg, append(users, "late")), tailReads(t, direct, append(users, "late")))
	for _, d := range bolttest.Diff(dumpDB(t, lg), dumpDB(t, direct), nil) {
		t.Error(d)
	}
}

// TestStore_badBatchChangesNothing: a batch with one bad event is refused
// whole, naming the event and field, and leaves the log, the tail and
// every count as they were.
func TestStore_badBatchChangesNothing(t *testing.T) {
	lg := openLogStore(t, filepath.Join(t.TempDir(), "log.db"))
	mustAdd(t, lg, ev("a", "x", "view"))
	before, size, tail := mustCounts(t, lg), lg.LogBytes(), lg.TailEvents()
	_, err := lg.AddInteractions(context.Background(), []api.Interaction{ev("b", "y", "view"), ev("b", "z", "view"), ev("b", "w", "no-such-type")})
	if api.ErrorCode(err) != api.CodeInvalid || !strings.Contains(err.Error(), "interactions[2].type") {
		t.Fatalf("bad batch: %v, want invalid naming interactions[2].type", err)
	}
	if got := mustCounts(t, lg); got != before || lg.LogBytes() != size || lg.TailEvents() != tail {
		t.Fatalf("a refused batch changed the store: counts %+v → %+v, log %d → %d bytes, tail %d → %d",
			before, got, size, lg.LogBytes(), tail, lg.TailEvents())
	}
}

// TestStore_concurrentIngest: appenders, readers and the applier at once;
// every acknowledged event is counted once, and still after a crash.
func TestStore_concurrentIngest(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.db")
	st, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	const writers, batches, perBatch = 6, 30, 50
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for b := range batches {
				evs := make([]api.Interaction, perBatch)
				for k := range evs {
					evs[k] = ev(fmt.Sprintf("w%d-%d", w, b%5), fmt.Sprintf("i%d", (b*perBatch+k)%97), "view")
				}
				if _, err := st.AddInteractions(ctx, evs); err != nil {
					t.Error(err)
					return
				}
				if b%7 == 0 {
					_ = st.applyTail()
				}
			}
		})
		wg.Go(func() {
			for b := range batches {
				if _, err := st.Profile(ctx, fmt.Sprintf("w%d-%d", w, b%5)); err != nil {
					t.Error(err)
				}
				if _, err := st.Counts(ctx); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	want := int64(writers * batches * perBatch)
	if got := mustCounts(t, st); got.Events != want || got.Users != writers*5 {
		t.Fatalf("counts %+v, want %d events of %d users", got, want, writers*5)
	}
	crash(t, st)
	st = openLogStore(t, path)
	if got := mustCounts(t, st); got.Events != want {
		t.Fatalf("after a crash: %d events, want %d", got.Events, want)
	}
	for w := range writers {
		u, err := st.User(ctx, fmt.Sprintf("w%d-0", w))
		if err != nil || u.Events != batches/5*perBatch {
			t.Fatalf("user w%d-0: %+v %v, want %d events", w, u, err, batches/5*perBatch)
		}
	}
}

// TestStore_Open_version3: a file of schema version 3 (no event log)
// opens, keeps its events, gets an empty log and takes new events.
func TestStore_Open_version3(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v3.db")
	st := openDirectStore(t, path)
	mustAdd(t, st, ev("a", "x", "view"), ev("b", "x", "like"))
	err := st.db.Update(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		if err := meta.Delete(keyLogID); err != nil {
			return err
		}
		return meta.Put(keySchema, u64(3))
	})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	if err := os.RemoveAll(logDir(path)); err != nil {
		t.Fatal(err)
	}
	ro, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("read-only open of version 3: %v", err)
	}
	if got := mustCounts(t, ro); got.Events != 2 {
		t.Fatalf("read-only version 3: %+v", got)
	}
	ro.Close()
	lg := openLogStore(t, path)
	mustAdd(t, lg, ev("c", "x", "view"))
	if got := mustCounts(t, lg); got.Events != 3 || got.Users != 3 {
		t.Fatalf("version 3 after an event: %+v", got)
	}
	crash(t, lg)
	lg = openLogStore(t, path)
	if got := mustCounts(t, lg); got.Events != 3 {
		t.Fatalf("version 3 after a crash: %+v", got)
	}
	var v uint64
	_ = lg.db.View(func(tx *bolt.Tx) error { v = getU64(tx.Bucket(bucketMeta).Get(keySchema)); return nil })
	if v != SchemaVersion {
		t.Fatalf("schema %d after a writable open, want %d", v, SchemaVersion)
	}
}

// TestStore_Open_foreignLog: a log folder beside a database it does not
// belong to (another file's, left behind) is refused, never replayed.
func TestStore_Open_foreignLog(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db")
	st := openLogStore(t, a)
	mustAdd(t, st, ev("a", "x", "view"))
	crash(t, st)
	openLogStore(t, b).Close()
	if err := os.RemoveAll(logDir(b)); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(logDir(a), logDir(b)); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(b, Options{}); err == nil || !strings.Contains(err.Error(), "belongs to another database") {
		t.Fatalf("open with another database's log: %v", err)
	}
}

// TestStore_backPressure: beyond the tail's bound an appender waits for the
// applier; one whose deadline passes meanwhile stores nothing, and a
// waiting one goes on once the tail is applied.
func TestStore_backPressure(t *testing.T) {
	old := maxTailEvents
	maxTailEvents = 100
	t.Cleanup(func() { maxTailEvents = old })
	lg := openLogStore(t, filepath.Join(t.TempDir(), "log.db"))
	mustAdd(t, lg, viewBatch("a", 150)...) // the tail was below the bound
	before := mustCounts(t, lg)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := lg.AddInteractions(ctx, []api.Interaction{ev("b", "x", "view")}); api.ErrorCode(err) != api.CodeUnavailable ||
		!strings.Contains(err.Error(), "150 events not yet applied") {
		t.Fatalf("append over the bound: %v, want unavailable naming the 150 events held", err)
	} else if e := (*api.Error)(nil); !errors.As(err, &e) || e.RetryAfter <= 0 {
		t.Fatalf("append over the bound: %#v, want a Retry-After", err)
	}
	if got := mustCounts(t, lg); got != before {
		t.Fatalf("a request given up changed the counts: %+v → %+v", before, got)
	}
	done := make(chan error)
	go func() {
		_, err := lg.AddInteractions(context.Background(), []api.Interaction{ev("c", "x", "view")})
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("append over the bound returned before the apply: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	if err := lg.applyTail(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := mustCounts(t, lg); got.Events != 151 || got.Users != 2 {
		t.Fatalf("after the apply: %+v, want 151 events of a and c", got)
	}
}

// logEvents reads every event of the log of the database at path, in order.
func logEvents(tb testing.TB, path string, id []byte) []logEvent {
	tb.Helper()
	segs, err := listSegments(logDir(path))
	if err != nil {
		tb.Fatal(err)
	}
	var out []logEvent
	for _, seg := range segs {
		f, err := os.Open(seg.path)
		if err != nil {
			tb.Fatal(err)
		}
		_, err = scanSegment(f, seg, id, 0, func(lb *logBatch, _ int64) error {
			out = append(out, lb.events...)
			return nil
		})
		f.Close()
		if err != nil {
			tb.Fatal(err)
		}
	}
	return out
}

func logID(tb testing.TB, st *Store) []byte {
	tb.Helper()
	var id []byte
	_ = st.db.View(func(tx *bolt.Tx) error { id = bytes.Clone(tx.Bucket(bucketMeta).Get(keyLogID)); return nil })
	return id
}

// TestBulkLoad_writesHistory: a bulk load writes every event to the event
// log, in arrival order, over several segments, as applied (opening the
// database replays none of it), and the log goes on taking events.
func TestBulkLoad_writesHistory(t *testing.T) {
	old := segmentBytes
	segmentBytes = 16 << 10
	t.Cleanup(func() { segmentBytes = old })
	s := genBulkStream(21, 30000)
	path := filepath.Join(t.TempDir(), "bulk.db")
	st := mustBulkLoad(t, path, s) // its counts equal the load's: nothing replayed twice
	got := logEvents(t, path, logID(t, st))
	if len(got) != len(s.events) {
		t.Fatalf("%d events in the log, want %d", len(got), len(s.events))
	}
	if segs, _ := listSegments(logDir(path)); len(segs) < 3 {
		t.Fatalf("%d segments, want several", len(segs))
	}
	for k, e := range s.events {
		ts := e.Timestamp
		if ts.IsZero() {
			ts = bulkClock
		}
		g := got[k]
		if g.user != e.UserID || g.item != e.ItemID || g.typ != e.Type || g.ts != ts.UnixNano() ||
			(g.bits&evHasValue != 0) != e.HasValue || g.value != e.Value {
			t.Fatalf("event %d: logged %+v, posted %+v", k, g, e)
		}
	}
	before := mustCounts(t, st)
	mustAdd(t, st, ev("late", "i00", "view"))
	crash(t, st)
	st = openLogStore(t, path)
	if got := mustCounts(t, st); got.Events != before.Events+1 || got.Users != before.Users+1 {
		t.Fatalf("after an event and a crash: %+v, before %+v", got, before)
	}
	if n := len(logEvents(t, path, logID(t, st))); n != len(s.events)+1 {
		t.Fatalf("%d events in the log, want %d", n, len(s.events)+1)
	}
}

// TestBulkLoad_publishInterrupted: a crash while a bulk load puts its
// database and log in place leaves a log marked pending. With the new
// database in place the log is kept and the mark dropped; without it the
// log, never the old database's, is removed and the old database opens.
func TestBulkLoad_publishInterrupted(t *testing.T) {
	dir := t.TempDir()
	mark := func(path string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(logDir(path), pendingName), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// The database was put in place, the mark not yet dropped.
	done := filepath.Join(dir, "done.db")
	mustBulkLoad(t, done, genBulkStream(22, 500)).Close()
	mark(done)
	st := openLogStore(t, done)
	if got := mustCounts(t, st); got.Events != 500 {
		t.Fatalf("published load: %+v", got)
	}
	if _, err := os.Stat(filepath.Join(logDir(done), pendingName)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the pending mark is still there: %v", err)
	}
	st.Close()
	// The log was put in place, the database not: the target is still
	// the pristine file.
	target := filepath.Join(dir, "target.db")
	openLogStore(t, target).Close()
	if err := os.RemoveAll(logDir(target)); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(logDir(done), logDir(target)); err != nil {
		t.Fatal(err)
	}
	mark(target)
	st = openLogStore(t, target)
	if got := mustCounts(t, st); got.Events != 0 {
		t.Fatalf("the unpublished load's events reached the old database: %+v", got)
	}
	mustAdd(t, st, ev("a", "x", "view"))
	crash(t, st)
	st = openLogStore(t, target)
	if got := mustCounts(t, st); got.Events != 1 {
		t.Fatalf("after an event and a crash: %+v", got)
	}
}

// TestStore_tailUserAppliedMeanwhile: a user created in one generation and
// carried into the next keeps the index 0 of a user bbolt has not stored;
// once the first generation is applied and dropped, a repeat of one of the
// user's pairs must find the pair in bbolt, not count a new one. (The
// background applier made this a rare race in TestBulkLoad_equalsIncremental.)
func TestStore_tailUserAppliedMeanwhile(t *testing.T) {
	dir := t.TempDir()
	lg, direct := openLogStore(t, filepath.Join(dir, "log.db")), openDirectStore(t, filepath.Join(dir, "direct.db"))
	both := func(evs ...api.Interaction) {
		t.Helper()
		mustAdd(t, lg, evs...)
		mustAdd(t, direct, evs...)
	}
	both(ev("u", "a", "view"), ev("u", "b", "like"))
	lg.mu.Lock()
	lg.freezeLocked()
	lg.mu.Unlock()
	both(ev("u", "c", "view"))
	// Apply and drop the first generation only, as the applier does.
	lg.mu.Lock()
	g := lg.gens[0]
	err := lg.db.Update(func(tx *bolt.Tx) error { return lg.applyFrozen(tx, []*tailGen{g}) })
	lg.tailMu.Lock()
	lg.gens = lg.gens[1:]
	lg.tailMu.Unlock()
	lg.tailEvents -= g.events
	lg.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	both(ev("u", "a", "view"), ev("u", "b", "dislike"))
	users := []string{"u"}
	compareReads(t, "tail vs direct", tailReads(t, lg, users), tailReads(t, direct, users))
	for _, d := range bolttest.Diff(dumpDB(t, lg), dumpDB(t, direct), nil) {
		t.Error(d)
	}
}

// TestStore_logEqualsDirect_busyApplier: with the applier running every
// millisecond, so that applies and drops of generations interleave with
// the appends at every point, the store still ends equal to the direct
// path's, key by key, and reads equal it along the way.
func TestStore_logEqualsDirect_busyApplier(t *testing.T) {
	old := applyEvery
	applyEvery = time.Millisecond
	t.Cleanup(func() { applyEvery = old })
	for _, seed := range []uint64{31} {
		s := genBulkStream(seed, 6000)
		dir := t.TempDir()
		lg := openTestStore(t, filepath.Join(dir, "log.db"), Options{Now: fixedClock})
		direct := openDirectStore(t, filepath.Join(dir, "direct.db"))
		users := streamUsers(s.events)
		rng := rand.New(rand.NewPCG(seed, 10))
		for lo, k := 0, 0; lo < len(s.events); k++ {
			hi := min(lo+1+rng.IntN(40), len(s.events))
			mustAdd(t, lg, s.events[lo:hi]...)
			mustAdd(t, direct, s.events[lo:hi]...)
			lo = hi
			if k%50 == 0 {
				compareReads(t, fmt.Sprintf("seed %d, batch %d", seed, k), tailReads(t, lg, users), tailReads(t, direct, users))
			}
		}
		compareReads(t, fmt.Sprintf("seed %d", seed), tailReads(t, lg, users), tailReads(t, direct, users))
		for _, d := range bolttest.Diff(dumpDB(t, lg), dumpDB(t, direct), nil) {
			t.Error(d)
		}
	}
}

// TestStore_backPressureExcludesApplying: the generations an apply
// transaction is writing leave the bound, so appenders go on while it
// runs until as many again have come; the one past that waits for the
// commit, and no event is lost or counted twice.
func TestStore_backPressureExcludesApplying(t *testing.T) {
	old := maxTailEvents
	maxTailEvents = 100
	t.Cleanup(func() { maxTailEvents = old })
	lg := openLogStore(t, filepath.Join(t.TempDir(), "log.db"))
	mustAdd(t, lg, viewBatch("a", 150)...) // the tail is past the bound
	// Hold bbolt's writer lock: the apply freezes the tail and then waits
	// for it, its transaction in flight.
	tx, err := lg.db.Begin(true)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback() // on a failure, before the store closes
	applied := make(chan error, 1)
	go func() { applied <- lg.applyTail() }()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		lg.mu.Lock()
		n := lg.applying
		lg.mu.Unlock()
		if n == 150 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the apply took %d events, want 150", n)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	for _, u := range []string{"b", "c"} { // 110 outside the transaction
		if _, err := lg.AddInteractions(ctx, viewBatch(u, 55)); err != nil {
			t.Fatalf("append of %s during the apply: %v", u, err)
		}
	}
	short, cancelShort := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancelShort()
	if _, err := lg.AddInteractions(short, viewBatch("d", 1)); api.ErrorCode(err) != api.CodeUnavailable ||
		!strings.Contains(err.Error(), "110 events not yet applied") {
		t.Fatalf("append past the bound outside the transaction: %v, want unavailable naming the 110 events held", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := lg.AddInteractions(context.Background(), viewBatch("e", 1))
		done <- err
	}()
	tx.Rollback()
	if err := <-applied; err != nil {
		t.Fatal(err)
	}
	select { // 110 left: still at the bound until they are applied
	case err := <-done:
		t.Fatalf("append returned with the tail at its bound: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	if err := lg.applyTail(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := lg.applyTail(); err != nil {
		t.Fatal(err)
	}
	if got := mustCounts(t, lg); got.Events != 150+110+1 || got.Users != 4 || lg.TailEvents() != 0 {
		t.Fatalf("after the applies: %+v, tail %d; want 261 events of a, b, c and e, none unapplied", got, lg.TailEvents())
	}
}

// TestStore_pacing: past half the tail's bound an appender is paced, in
// proportion to how far past, up to maxPace at the bound; below half it is
// not.
func TestStore_pacing(t *testing.T) {
	oldBound, oldPace := maxTailEvents, maxPace
	maxTailEvents, maxPace = 100, 400*time.Millisecond
	t.Cleanup(func() { maxTailEvents, maxPace = oldBound, oldPace })
	lg := openLogStore(t, filepath.Join(t.TempDir(), "log.db"))
	pace := func() time.Duration {
		lg.mu.Lock()
		defer lg.mu.Unlock()
		return lg.pace()
	}
	mustAdd(t, lg, viewBatch("a", 50)...)
	if d := pace(); d != 0 {
		t.Fatalf("at half the bound: paced %v, want 0", d)
	}
	mustAdd(t, lg, viewBatch("b", 25)...)
	if d := pace(); d != 200*time.Millisecond {
		t.Fatalf("75 of 100: paced %v, want 200ms", d)
	}
	start := time.Now()
	mustAdd(t, lg, viewBatch("c", 1)...)
	if took := time.Since(start); took < 200*time.Millisecond {
		t.Fatalf("an append at 75 of 100 took %v, want at least its 200ms pace", took)
	}
	mustAdd(t, lg, viewBatch("d", 30)...)
	if d := pace(); d != maxPace {
		t.Fatalf("106 of 100: paced %v, want maxPace", d)
	}
	if err := lg.applyTail(); err != nil {
		t.Fatal(err)
	}
	if d := pace(); d != 0 {
		t.Fatalf("after the apply: paced %v, want 0", d)
	}
}

// viewBatch is n view events of user on items i0, i1, ….
func viewBatch(user string, n int) []api.Interaction {
	out := make([]api.Interaction, n)
	for k := range out {
		out[k] = ev(user, fmt.Sprintf("i%d", k), "view")
	}
	return out
}
