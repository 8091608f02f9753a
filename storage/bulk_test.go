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
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/storage/bolttest"
	"github.com/recsys-engine/recsys/storage/dump"
)

// bulkStream is a generated import: item records, then events with
// repeated pairs, every kind of type of the default policy (ratings below
// and above the threshold, negatives), events without a time, times out of
// order and equal, several days, and items first seen in events.
type bulkStream struct {
	items  []api.Item
	events []api.Interaction
}

func genBulkStream(seed uint64, nEvents int) bulkStream {
	rng := rand.New(rand.NewPCG(seed, 7))
	var s bulkStream
	for k := range 30 {
		it := api.Item{ID: fmt.Sprintf("i%02d", rng.IntN(25)),
			Features:   map[string]float64{"f1": rng.Float64(), "f2": float64(k)},
			Categories: []string{fmt.Sprintf("c%d", k%4)},
			Labels:     map[string]string{"title": fmt.Sprintf("Item %d", k)},
			Hidden:     k%9 == 0}
		if k%5 == 0 {
			it.Features = nil
		}
		s.items = append(s.items, it) // some ids repeat: the later record replaces
	}
	types := []string{"view", "click", "purchase", "like", "rating", "rating", "dislike", "hide", "play", "cart"}
	base := time.Date(2024, 12, 30, 22, 0, 0, 0, time.UTC)
	for range nEvents {
		e := api.Interaction{
			UserID: fmt.Sprintf("u%d", int(60*rng.Float64()*rng.Float64())),
			ItemID: fmt.Sprintf("i%02d", int(45*rng.Float64()*rng.Float64())),
			Type:   types[rng.IntN(len(types))],
		}
		if e.Type == "rating" || rng.IntN(4) == 0 {
			e.Value, e.HasValue = float64(rng.IntN(6)), true
		}
		switch r := rng.IntN(20); {
		case r == 0: // no time: the server's clock
		case r == 1: // the same instant as another event
			e.Timestamp = base.Add(time.Duration(rng.IntN(3)) * time.Hour)
		default: // ten days, in no particular order
			e.Timestamp = base.Add(time.Duration(rng.Int64N(int64(240 * time.Hour))))
		}
		s.events = append(s.events, e)
	}
	return s
}

var bulkClock = time.Date(2025, 1, 3, 12, 0, 0, 0, time.UTC)

func fixedClock() time.Time { return bulkClock }

// incrementalLoad stores the stream through PutItems and AddInteractions
// in batches of varied sizes, as `recsys import` did before bulk loading.
func incrementalLoad(tb testing.TB, path string, s bulkStream, seed uint64) *Store {
	tb.Helper()
	st, err := Open(path, Options{Now: fixedClock})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	ctx := context.Background()
	for lo := 0; lo < len(s.items); lo += 7 {
		if err := st.PutItems(ctx, s.items[lo:min(lo+7, len(s.items))]); err != nil {
			tb.Fatal(err)
		}
	}
	rng := rand.New(rand.NewPCG(seed, 8))
	for lo := 0; lo < len(s.events); {
		hi := min(lo+1+rng.IntN(300), len(s.events))
		if _, err := st.AddInteractions(ctx, s.events[lo:hi]); err != nil {
			tb.Fatal(err)
		}
		lo = hi
	}
	return st
}

func streamSource(s bulkStream) BulkSource {
	return BulkSource{
		Items: func(put func(api.Item) error) error {
			for _, it := range s.items {
				if err := put(it); err != nil {
					return err
				}
			}
			return nil
		},
		Events: func(add func(api.Interaction) error) error {
			for _, e := range s.events {
				if err := add(e); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

func mustBulkLoad(tb testing.TB, path string, s bulkStream) *Store {
	tb.Helper()
	stats, err := BulkLoad(path, BulkOptions{Now: fixedClock}, streamSource(s))
	if err != nil {
		tb.Fatal(err)
	}
	if stats.Events != len(s.events) || stats.Items != len(s.items) {
		tb.Fatalf("stats %+v, want %d events and %d items", stats, len(s.events), len(s.items))
	}
	st, err := Open(path, Options{Now: fixedClock})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	if got := mustCounts(tb, st); got != stats.Counts {
		tb.Fatalf("stats counts %+v, stored %+v", stats.Counts, got)
	}
	return st
}

// dumpDB applies the store's tail and dumps its bbolt file, but for the
// meta keys of the event log, which name each file's own log.
func dumpDB(tb testing.TB, st *Store) bolttest.Dump {
	tb.Helper()
	if err := st.applyTail(); err != nil {
		tb.Fatal(err)
	}
	return bolttest.Of(tb, st.db).Without(string(bucketMeta), "log/")
}

// publicReads is everything the store answers about its interactions.
func publicReads(tb testing.TB, st *Store) map[string]any {
	tb.Helper()
	ctx := context.Background()
	out := map[string]any{"counts": mustCounts(tb, st)}
	add := func(name string, v any, err error) {
		tb.Helper()
		if err != nil {
			tb.Fatalf("%s: %v", name, err)
		}
		out[name] = v
	}
	act, err := st.Activity(ctx, 1000)
	add("activity", act, err)
	snap, err := st.Snapshot(ctx)
	add("snapshot", snap, err)
	cat, err := st.Catalogue(ctx)
	add("catalogue", cat, err)
	items, _, err := st.Items(ctx, api.Page{Limit: 1000})
	add("items", items, err)
	for _, id := range snap.UserIDs {
		if id == "" {
			continue
		}
		u, err := st.User(ctx, id)
		add("user "+id, u, err)
		pr, err := st.Profile(ctx, id)
		add("profile "+id, pr, err)
		h, _, err := st.History(ctx, id, api.Page{Limit: 1000})
		add("history "+id, h, err)
	}
	return out
}

func comparePublicReads(t *testing.T, a, b *Store) {
	t.Helper()
	ra, rb := publicReads(t, a), publicReads(t, b)
	if len(ra) != len(rb) {
		t.Errorf("%d reads vs %d", len(ra), len(rb))
	}
	for name, va := range ra {
		if vb := rb[name]; !reflect.DeepEqual(va, vb) {
			t.Errorf("%s:\nincremental %+v\nbulk        %+v", name, va, vb)
		}
	}
}

// TestBulkLoad_equalsIncremental is the proof that a bulk load stores what
// the incremental path stores: the same stream through both gives the same
// file content, bucket by bucket, key by key, value by value (sequences
// included), and the same answers to every read. Then the same further
// events through AddInteractions into both still agree, so the bulk-built
// file goes on as a normal database (dense indices continue, no reuse).
func TestBulkLoad_equalsIncremental(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			s := genBulkStream(seed, 4000)
			dir := t.TempDir()
			inc := incrementalLoad(t, filepath.Join(dir, "inc.db"), s, seed)
			bulk := mustBulkLoad(t, filepath.Join(dir, "bulk.db"), s)
			da, db := dumpDB(t, inc), dumpDB(t, bulk)
			for _, d := range bolttest.Diff(da, db, nil) {
				t.Error(d)
			}
			if n := len(da[string(bucketPairDays)].Keys); n == 0 {
				t.Fatal("no pair_days entry: the stream does not test repeats on later days")
			}
			comparePublicReads(t, inc, bulk)

			more := genBulkStream(seed+100, 500).events
			mustAdd(t, inc, more...)
			mustAdd(t, bulk, more...)
			for _, d := range bolttest.Diff(dumpDB(t, inc), dumpDB(t, bulk), nil) {
				t.Error("after further events: " + d)
			}
		})
	}
}

// TestBulkLoad_pristineTarget: a database that was only opened (as serve
// leaves it) is replaced; one with data is refused with dump.ErrNotEmpty and
// left byte for byte as it was, as is the stream (not read).
func TestBulkLoad_pristineTarget(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "db")
	st := mustOpen(t, path)
	st.Close()
	s := genBulkStream(4, 300)
	bulk := mustBulkLoad(t, path, s)
	if c := mustCounts(t, bulk); c.Events != 300 {
		t.Fatalf("events %d, want 300", c.Events)
	}
	bulk.Close()

	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	read := false
	_, err = BulkLoad(path, BulkOptions{}, BulkSource{Events: func(func(api.Interaction) error) error { read = true; return nil }})
	if !errors.Is(err, dump.ErrNotEmpty) {
		t.Fatalf("err %v, want dump.ErrNotEmpty", err)
	}
	after, _ := os.ReadFile(path)
	if !bytes.Equal(before, after) || read {
		t.Fatalf("a refused load changed the file (%v) or read the stream (%v)", !bytes.Equal(before, after), read)
	}

	// Only an item: not pristine either.
	path2 := filepath.Join(dir, "db2")
	st2 := mustOpen(t, path2)
	if err := st2.PutItems(context.Background(), []api.Item{{ID: "x"}}); err != nil {
		t.Fatal(err)
	}
	st2.Close()
	if _, err := BulkLoad(path2, BulkOptions{}, BulkSource{}); !errors.Is(err, dump.ErrNotEmpty) {
		t.Fatalf("err %v, want dump.ErrNotEmpty", err)
	}
}

// TestBulkLoad_failureLeavesNothing: an event the policy refuses stops the
// load; no target and no temporary file remain. A stale temporary file of
// a killed load is removed by the next load, and one whose lock is held (a
// load still running) is left alone.
func TestBulkLoad_failureLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "db")
	s := genBulkStream(5, 100)
	s.events[50].Type = "rating"
	s.events[50].HasValue = false
	_, err := BulkLoad(path, BulkOptions{}, streamSource(s))
	var ae *api.Error
	if !errors.As(err, &ae) || ae.Code != api.CodeInvalid {
		t.Fatalf("err %v, want invalid", err)
	}
	if names, _ := filepath.Glob(filepath.Join(dir, "*")); len(names) != 0 {
		t.Fatalf("left %v", names)
	}

	stale := path + bulkTempInfix + "123"
	if err := os.WriteFile(stale, []byte("half a database"), 0o600); err != nil {
		t.Fatal(err)
	}
	running, err := bolt.Open(path+bulkTempInfix+"456", 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer running.Close()
	mustBulkLoad(t, path, genBulkStream(5, 100)).Close()
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("stale temporary file: %v", err)
	}
	if _, err := os.Stat(running.Path()); err != nil {
		t.Fatalf("the running load's file: %v", err)
	}
}

// TestOpen_afterReplace: a process that opened the path while a bulk load
// held the old file's lock opens the new file once the lock is released,
// not the unlinked old one.
func TestOpen_afterReplace(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "db")
	st := mustOpen(t, path)
	st.Close()
	holder, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	opened, holds := make(chan *Store), make(chan struct{})
	var once sync.Once
	go func() {
		st, err := Open(path, Options{Timeout: 10 * time.Second,
			openFile: func(name string, flag int, perm os.FileMode) (*os.File, error) {
				f, err := os.OpenFile(name, flag, perm)
				once.Do(func() { close(holds) })
				return f, err
			}})
		if err != nil {
			t.Error(err)
		}
		opened <- st
	}()
	select {
	case <-holds: // the opener holds the old file and now waits for its lock
	case <-time.After(10 * time.Second):
		t.Fatal("the opener has not opened the file 10 s on")
	}
	next := filepath.Join(dir, "next")
	mustBulkLoad(t, next, genBulkStream(6, 50)).Close()
	// As BulkLoad does: the old file's empty log goes, the new file's
	// comes with it.
	if err := os.RemoveAll(logDir(path)); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(logDir(next), logDir(path)); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(next, path); err != nil {
		t.Fatal(err)
	}
	holder.Close()
	st = <-opened
	if st == nil {
		t.FailNow()
	}
	defer st.Close()
	if c := mustCounts(t, st); c.Events != 50 {
		t.Fatalf("the opener sees %d events, want the new file's 50", c.Events)
	}
}

// TestBulkLoad_symlinkedPristineTarget: a --db that is a symbolic link to
// a pristine database loads into the file it names (the link stays a
// link), and the file keeps its permissions.
func TestBulkLoad_symlinkedPristineTarget(t *testing.T) {
	dir := t.TempDir()
	real, link := filepath.Join(dir, "real.db"), filepath.Join(dir, "link.db")
	st := mustOpen(t, real)
	st.Close()
	if err := os.Chmod(real, 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real.db", link); err != nil {
		t.Fatal(err)
	}
	mustBulkLoad(t, link, genBulkStream(7, 100)).Close()
	fi, err := os.Lstat(link)
	if err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("link.db is no longer a symbolic link: %v %v", fi.Mode(), err)
	}
	fi, err = os.Stat(real)
	if err != nil || fi.Mode().Perm() != 0o640 {
		t.Fatalf("real.db: mode %v, err %v; want 0640", fi.Mode().Perm(), err)
	}
	st, err = Open(real, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if c := mustCounts(t, st); c.Events != 100 {
		t.Fatalf("real.db holds %d events, want 100", c.Events)
	}
}
