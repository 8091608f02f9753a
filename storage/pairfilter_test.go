package storage

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/recsys-engine/recsys/api"
)

// TestPairFilter_rates: every pair added is a "maybe", before and after
// the filter is ready (before, everything is); absent pairs are a false
// "maybe" at the rate of a Bloom filter blocked to one 64-bit word with 4
// bits a pair: for a word holding L other pairs, (1 − (1 − 1/64)^{4L})^4,
// L Poisson with the filter's pairs per word.
func TestPairFilter_rates(t *testing.T) {
	const n = 200_000
	f := &pairFilter{}
	tab := newFilterTable(n)
	f.next.Store(tab) // being built: set, not yet answering
	rng := rand.New(rand.NewPCG(1, 2))
	type pair struct{ u, i uint64 }
	in := make([]pair, n)
	for k := range in {
		// Users below 1<<20 are in; the absent pairs' users are above.
		in[k] = pair{rng.Uint64N(1 << 20), rng.Uint64N(50_000)}
		f.add(in[k].u, in[k].i)
	}
	if !f.mayHold(1<<40, 1) {
		t.Fatal("a filter with no table built said no")
	}
	f.table.Store(tab)
	for _, p := range in {
		if !f.mayHold(p.u, p.i) {
			t.Fatalf("pair %v added, filter says no", p)
		}
	}
	const probes = 1_000_000
	false1 := 0
	for range probes {
		if f.mayHold(1<<20+rng.Uint64N(1<<30), rng.Uint64N(50_000)) {
			false1++
		}
	}
	lambda := float64(n) / float64(len(tab.words))
	want, p := 0.0, math.Exp(-lambda) // P(L = 0)
	for l := 0; l < 200; l++ {
		want += p * math.Pow(1-math.Pow(1-1.0/64, 4*float64(l)), 4)
		p *= lambda / float64(l+1)
	}
	got := float64(false1) / probes
	// Binomial standard error over 10⁶ probes is under 10⁻⁴ here.
	if math.Abs(got-want) > 5*math.Sqrt(want/probes) || got > 0.01 {
		t.Fatalf("false maybes %.5f, want %.5f (%.1f pairs a word)", got, want, lambda)
	}
	t.Logf("%d bits a pair: false maybes %.5f, Bloom %.5f", len(tab.words)*64/n, got, want)
}

// TestStore_filterSparesPairLookups: with the filter built, the fold looks
// up in bbolt the users and the stored pairs a tail repeats, and no new
// pair; without it, every new pair too. Both fold to the direct path's
// records, and apply to its file.
func TestStore_filterSparesPairLookups(t *testing.T) {
	s := genBulkStream(31, 2000)
	dir := t.TempDir()
	withF := openLogStore(t, filepath.Join(dir, "f.db"))
	without := openLogStore(t, filepath.Join(dir, "n.db"))
	direct := openDirectStore(t, filepath.Join(dir, "direct.db"))
	feed(t, s.events, 32, withF, without, direct)
	for _, st := range []*Store{withF, without} {
		if err := st.applyTail(); err != nil {
			t.Fatal(err)
		}
	}
	withF.filter = &pairFilter{}
	withF.filter.grow(withF.db, mustCounts(t, withF).Interactions, withF.stop)
	withF.filter.wg.Wait()
	if withF.filter.table.Load() == nil {
		t.Fatal("the build did not finish")
	}
	// A third repeats a stored pair, the rest are new pairs of stored users.
	var more []api.Interaction
	users, stored := map[string]bool{}, map[[2]string]bool{}
	for k := range 600 {
		e := s.events[k]
		users[e.UserID] = true
		if k%3 != 0 {
			e.ItemID = fmt.Sprintf("new%d", k%150)
		} else {
			stored[[2]string{e.UserID, e.ItemID}] = true
		}
		more = append(more, e)
	}
	newPairs := map[[2]string]bool{}
	for _, e := range more {
		if !stored[[2]string{e.UserID, e.ItemID}] {
			newPairs[[2]string{e.UserID, e.ItemID}] = true
		}
	}
	var lookups atomic.Int64
	foldLookups = func() { lookups.Add(1) }
	t.Cleanup(func() { foldLookups = nil })
	count := func(st *Store) int64 {
		feed(t, more, 33, st)
		lookups.Store(0)
		mustCounts(t, st) // folds the tail
		return lookups.Load()
	}
	nF, nN := count(withF), count(without)
	feed(t, more, 33, direct)
	want := int64(len(users) + len(stored))
	if nF != want || nN != want+int64(len(newPairs)) {
		t.Fatalf("fold look-ups %d with the filter, %d without; want %d (%d users, %d stored pairs) and %d more (new pairs)",
			nF, nN, want, len(users), len(stored), len(newPairs))
	}
	names := streamUsers(append(s.events, more...))
	compareReads(t, "filter vs direct", tailReads(t, withF, names), tailReads(t, direct, names))
	if err := withF.applyTail(); err != nil {
		t.Fatal(err)
	}
	comparePublicReads(t, withF, direct)
}

// TestStore_deletedItemComesBackNew: appends remember the indices of the
// items bbolt holds; an item deleted and then named by an event again is
// a new item with a new index, its events its own, not the old index's.
func TestStore_deletedItemComesBackNew(t *testing.T) {
	st := openTestStore(t, filepath.Join(t.TempDir(), "d.db"), Options{Now: fixedClock})
	ctx := context.Background()
	mustAdd(t, st, ev("a", "x", "view"), ev("a", "y", "view"))
	if err := st.applyTail(); err != nil {
		t.Fatal(err)
	}
	mustAdd(t, st, ev("b", "x", "like")) // x's index now remembered
	if err := st.DeleteItem(ctx, "x"); err != nil {
		t.Fatal(err)
	}
	mustAdd(t, st, ev("c", "x", "view"))
	for _, apply := range []bool{false, true} {
		if apply {
			if err := st.applyTail(); err != nil {
				t.Fatal(err)
			}
		}
		h, _, err := st.History(ctx, "c", api.Page{Limit: 10})
		if err != nil || len(h) != 1 || h[0].ItemID != "x" || h[0].Count != 1 {
			t.Fatalf("applied %v: c's history %+v, %v; want x once", apply, h, err)
		}
		if c := mustCounts(t, st); c.Items != 2 || c.Interactions != 2 {
			t.Fatalf("applied %v: %+v, want 2 items (y, the new x) and 2 pairs (a–y, c–x)", apply, c)
		}
		in, err := st.ItemsInteracted(ctx, []uint32{1, 2, 3})
		if err != nil || in[0] || !in[1] || !in[2] {
			t.Fatalf("applied %v: ItemsInteracted(1 old x, 2 y, 3 new x) = %v, %v", apply, in, err)
		}
	}
}

// TestPairFilter_grows: a store that starts empty gets a table at open,
// and a larger one each time its pairs outgrow the answering table twice
// over; every stored pair is a "maybe" throughout, and the store folds as
// the direct path does.
func TestPairFilter_grows(t *testing.T) {
	dir := t.TempDir()
	lg := openLogStore(t, filepath.Join(dir, "g.db"))
	direct := openDirectStore(t, filepath.Join(dir, "direct.db"))
	lg.filter = &pairFilter{}
	lg.filter.grow(lg.db, 0, lg.stop) // as at open
	lg.filter.wg.Wait()
	first := lg.filter.table.Load()
	if first == nil || first.pairs != 0 {
		t.Fatalf("table at open %+v, want one sized for 0 pairs", first)
	}
	sizes := []int64{first.pairs}
	for round := range 4 {
		// Each round more than doubles the pairs: 40 users × 25·2^round new items.
		var evs []api.Interaction
		for u := range 40 {
			for i := range 25 << round {
				evs = append(evs, ev(fmt.Sprintf("u%d", u), fmt.Sprintf("r%d-i%d", round, i), "view"))
			}
		}
		feed(t, evs, uint64(round), lg, direct)
		if err := lg.applyTail(); err != nil { // grows the filter, in the background
			t.Fatal(err)
		}
		lg.filter.wg.Wait()
		tab := lg.filter.table.Load()
		pairs := mustCounts(t, lg).Interactions
		if tab.pairs != pairs {
			t.Fatalf("round %d: table sized for %d pairs, %d stored", round, tab.pairs, pairs)
		}
		sizes = append(sizes, tab.pairs)
		err := lg.db.View(func(tx *bolt.Tx) error {
			return tx.Bucket(bucketPairs).ForEach(func(k, _ []byte) error {
				if !lg.filter.mayHold(binary.BigEndian.Uint64(k), binary.BigEndian.Uint64(k[8:])) {
					return fmt.Errorf("stored pair %x: filter says no", k)
				}
				return nil
			})
		})
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
	}
	if want := []int64{0, 1000, 3000, 7000, 15000}; !reflect.DeepEqual(sizes, want) {
		t.Fatalf("tables sized for %v pairs, want %v", sizes, want)
	}
	comparePublicReads(t, lg, direct)
}

// TestPairFilter_builtOnceIngesting: opening a store with pairs builds no
// table (a process that only reads or trains never scans the pairs for
// it); the applier's first apply of events starts one, sized for the
// pairs stored.
func TestPairFilter_builtOnceIngesting(t *testing.T) {
	path := filepath.Join(t.TempDir(), "b.db")
	st := openTestStore(t, path, Options{Now: fixedClock})
	mustAdd(t, st, ev("a", "x", "view"), ev("b", "y", "view"))
	st.Close()
	passes := make(chan struct{}, 1)
	st = openTestStore(t, path, Options{Now: fixedClock, afterApply: func() {
		select {
		case passes <- struct{}{}:
		default:
		}
	}})
	// The applier has ticked, with nothing to apply.
	select {
	case <-passes:
	case <-time.After(10 * time.Second):
		t.Fatal("no pass of the applier 10 s after the open")
	}
	if st.filter.table.Load() != nil || st.filter.next.Load() != nil {
		t.Fatal("a table was built at open, before any event")
	}
	mustAdd(t, st, ev("c", "z", "view"))
	deadline := time.Now().Add(10 * time.Second)
	for st.filter.table.Load() == nil {
		if time.Now().After(deadline) {
			t.Fatal("no table 10 s after the first events")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if tab := st.filter.table.Load(); tab.pairs != 3 || !st.filter.mayHold(1, 1) {
		t.Fatalf("table sized for %d pairs, want 3; (a, x) a maybe: %v", tab.pairs, st.filter.mayHold(1, 1))
	}
}

// TestPairFilter_addMeetsBuildEnd: a pair added while a build ends is set
// in the table that answers after it. The build ends by making its table
// the answering one and then clearing next; add must read next before the
// answering table, or an add that read the old table before the switch and
// next after the clear sets the pair in the old table only, and the new one
// answers a false "no". Many short builds race a stream of adds.
func TestPairFilter_addMeetsBuildEnd(t *testing.T) {
	db, err := bolt.Open(filepath.Join(t.TempDir(), "f.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Update(func(tx *bolt.Tx) error {
		_, err := tx.CreateBucket(bucketPairs)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	for round := range 3000 {
		f := &pairFilter{}
		f.table.Store(newFilterTable(0))
		f.grow(db, 1, stop) // the answering table holds 0 pairs: grows
		done := make(chan struct{})
		go func() { f.wg.Wait(); close(done) }()
		var added []uint64
		for i := uint64(1); ; i++ {
			f.add(uint64(round), i)
			added = append(added, i)
			select {
			case <-done:
			default:
				continue
			}
			break
		}
		tab := f.table.Load()
		if tab.pairs != 1 {
			t.Fatalf("round %d: answering table sized for %d pairs, want the grown one", round, tab.pairs)
		}
		for _, i := range added {
			if !tab.mayHold(uint64(round), i) {
				t.Fatalf("round %d: pair (%d, %d) added during the build is a \"no\" once it ends", round, round, i)
			}
		}
	}
}
