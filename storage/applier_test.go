package storage

import (
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/storage/bolttest"
)

// txID is the id of the last committed bbolt transaction of st.
func txID(tb testing.TB, st *Store) int {
	tb.Helper()
	var id int
	if err := st.db.View(func(tx *bolt.Tx) error { id = tx.ID(); return nil }); err != nil {
		tb.Fatal(err)
	}
	return id
}

// freezeGens feeds parts[k] to lg and direct, freezing lg's current
// generation after each part but the last, so lg's tail has len(parts)
// generations.
func freezeGens(tb testing.TB, lg, direct *Store, parts ...[]api.Interaction) {
	tb.Helper()
	for k, part := range parts {
		feed(tb, part, uint64(20+k), lg, direct)
		if k < len(parts)-1 {
			lg.mu.Lock()
			lg.freezeLocked()
			lg.mu.Unlock()
		}
	}
	if n := len(lg.gens); n != len(parts) {
		tb.Fatalf("%d generations, want %d", n, len(parts))
	}
}

// TestStore_applyMergesGenerations: the applier folds every generation of
// the tail into bbolt in one transaction (so that a page several of them
// change is written once), and the file it leaves equals the direct
// path's key by key, users created in one generation and continued in the
// next included.
func TestStore_applyMergesGenerations(t *testing.T) {
	s := genBulkStream(11, 3000)
	dir := t.TempDir()
	lg, direct := openLogStore(t, filepath.Join(dir, "log.db")), openDirectStore(t, filepath.Join(dir, "direct.db"))
	freezeGens(t, lg, direct, s.events[:1000], s.events[1000:1800], s.events[1800:2400], s.events[2400:])
	before := txID(t, lg)
	if err := lg.applyTail(); err != nil {
		t.Fatal(err)
	}
	if got := txID(t, lg) - before; got != 1 {
		t.Fatalf("the tail of 4 generations was applied in %d transactions, want 1", got)
	}
	if n := lg.TailEvents(); n != 0 {
		t.Fatalf("%d events left in the tail", n)
	}
	users := streamUsers(s.events)
	compareReads(t, "applied vs direct", tailReads(t, lg, users), tailReads(t, direct, users))
	for _, d := range bolttest.Diff(dumpDB(t, lg), dumpDB(t, direct), nil) {
		t.Error(d)
	}
}

// TestStore_replayAfterMergedApply: a crash after a transaction that
// applied several generations but before they left memory replays from
// the position that transaction stored: nothing applied twice, nothing
// lost, and the file equals the direct path's.
func TestStore_replayAfterMergedApply(t *testing.T) {
	s := genBulkStream(12, 3000)
	dir := t.TempDir()
	path := filepath.Join(dir, "log.db")
	lg := openLogStore(t, path)
	direct := openDirectStore(t, filepath.Join(dir, "direct.db"))
	freezeGens(t, lg, direct, s.events[:900], s.events[900:1700], s.events[1700:2300])
	lg.mu.Lock()
	lg.freezeLocked()
	frozen := lg.gens[:len(lg.gens)-1]
	lg.mu.Unlock()
	if err := lg.db.Update(func(tx *bolt.Tx) error { return lg.applyFrozen(tx, frozen) }); err != nil {
		t.Fatal(err)
	}
	feed(t, s.events[2300:], 13, lg, direct)
	crash(t, lg)

	users := streamUsers(s.events)
	want := tailReads(t, direct, users)
	lg = openLogStore(t, path)
	compareReads(t, "reopened vs direct", tailReads(t, lg, users), want)
	for _, d := range bolttest.Diff(dumpDB(t, lg), dumpDB(t, direct), nil) {
		t.Error(d)
	}
}

// TestStore_crashLeavesFreelist: every commit writes bbolt's list of free
// pages, so a file whose process died (no Close) still has one, and the
// next Open reads it instead of walking the whole file (38 s at 20M
// events out of the page cache).
func TestStore_crashLeavesFreelist(t *testing.T) {
	s := genBulkStream(14, 2000)
	path := filepath.Join(t.TempDir(), "log.db")
	lg := openLogStore(t, path)
	for round := range 3 {
		feed(t, s.events[round*600:(round+1)*600], uint64(30+round), lg)
		if err := lg.applyTail(); err != nil {
			t.Fatal(err)
		}
		// A delete frees pages in a small commit of its own.
		if err := lg.DeleteUser(t.Context(), s.events[round].UserID); err != nil && api.ErrorCode(err) != api.CodeNotFound {
			t.Fatal(err)
		}
		crash(t, lg)
		if !freelistSynced(t, path) {
			t.Fatalf("round %d: the file a crash left has no list of free pages", round)
		}
		lg = openLogStore(t, path)
	}
	if c := mustCounts(t, lg); c.Events == 0 {
		t.Fatalf("no events stored: %+v", c)
	}
}

// TestStore_openAppliesInBackground: a store opened on a log with an
// unapplied tail serves at once, reads merging the replayed tail, and its
// applier then applies it: the file ends equal to the direct path's.
func TestStore_openAppliesInBackground(t *testing.T) {
	s := genBulkStream(15, 2500)
	dir := t.TempDir()
	path := filepath.Join(dir, "log.db")
	lg := openLogStore(t, path)
	direct := openDirectStore(t, filepath.Join(dir, "direct.db"))
	feed(t, s.events[:1200], 16, lg, direct)
	if err := lg.applyTail(); err != nil {
		t.Fatal(err)
	}
	feed(t, s.events[1200:], 17, lg, direct)
	crash(t, lg)

	users := streamUsers(s.events)
	want := tailReads(t, direct, users)
	lg = openTestStore(t, path, Options{Now: fixedClock})
	compareReads(t, "just opened vs direct", tailReads(t, lg, users), want)
	deadline := time.Now().Add(20 * time.Second)
	for lg.TailEvents() > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d events still unapplied 20 s after open", lg.TailEvents())
		}
		time.Sleep(5 * time.Millisecond)
	}
	compareReads(t, "applied vs direct", tailReads(t, lg, users), want)
	for _, d := range bolttest.Diff(dumpDB(t, lg), dumpDB(t, direct), nil) {
		t.Error(d)
	}
}
