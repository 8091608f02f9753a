package storage

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"recsys/api"
)

func mustOpenStore(tb testing.TB) *Store {
	tb.Helper()
	s := mustOpen(tb, filepath.Join(tb.TempDir(), "test.db"))
	tb.Cleanup(func() { s.Close() })
	return s
}

// mustOpen opens the store at path with the default options; the caller
// closes it.
func mustOpen(tb testing.TB, path string) *Store {
	tb.Helper()
	s, err := Open(path, Options{})
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

func ev(user, item, typ string) api.Interaction {
	return api.Interaction{UserID: user, ItemID: item, Type: typ}
}

func evv(user, item, typ string, v float64) api.Interaction {
	return api.Interaction{UserID: user, ItemID: item, Type: typ, Value: v, HasValue: true}
}

func mustAdd(tb testing.TB, s *Store, evs ...api.Interaction) {
	tb.Helper()
	if _, err := s.AddInteractions(context.Background(), evs); err != nil {
		tb.Fatal(err)
	}
}

func mustCounts(tb testing.TB, s *Store) api.Counts {
	tb.Helper()
	c, err := s.Counts(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

func TestStore_AddInteractions_counts(t *testing.T) {
	s := mustOpenStore(t)
	mustAdd(t, s, ev("a", "x", "view"), ev("a", "x", "view"), ev("a", "y", "click"), ev("b", "x", "purchase"))
	got := mustCounts(t, s)
	want := api.Counts{Users: 2, Items: 2, Interactions: 3, Positives: 3, Events: 4}
	if got != want {
		t.Fatalf("counts = %+v, want %+v", got, want)
	}
	u, err := s.User(context.Background(), "a")
	if err != nil {
		t.Fatal(err)
	}
	if u.Items != 2 || u.Positives != 2 || u.Events != 3 {
		t.Fatalf("user a = %+v, want 2 items, 2 positives, 3 events", u)
	}
	it, err := s.Item(context.Background(), "x")
	if err != nil {
		t.Fatal(err)
	}
	if it.Positives != 2 {
		t.Fatalf("item x popularity = %d, want 2", it.Positives)
	}
}

func TestStore_AddInteractions_policy(t *testing.T) {
	s := mustOpenStore(t)
	ctx := context.Background()
	// rating>=4 in the default policy: 3 is not relevant, 5 is.
	mustAdd(t, s, evv("a", "low", "rating", 3), evv("a", "high", "rating", 5), ev("a", "hated", "view"))
	mustAdd(t, s, ev("a", "hated", "dislike"))
	prof, err := s.Profile(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	cat, err := s.Catalogue(ctx)
	if err != nil {
		t.Fatal(err)
	}
	names := func(idx []uint32) []string {
		var out []string
		for _, i := range idx {
			out = append(out, cat.ItemIDs[i])
		}
		sort.Strings(out)
		return out
	}
	if got := names(prof.Positive); !reflect.DeepEqual(got, []string{"high"}) {
		t.Errorf("positive = %v, want [high]", got)
	}
	if got := names(prof.Negative); !reflect.DeepEqual(got, []string{"hated"}) {
		t.Errorf("negative = %v, want [hated]", got)
	}
	if got := names(prof.Consumed); !reflect.DeepEqual(got, []string{"hated", "high", "low"}) {
		t.Errorf("consumed = %v, want all three", got)
	}
	if c := mustCounts(t, s); c.Positives != 1 {
		t.Errorf("positives = %d, want 1 (the dislike revoked the view)", c.Positives)
	}
	// A later positive event clears the negative one.
	mustAdd(t, s, ev("a", "hated", "like"))
	if c := mustCounts(t, s); c.Positives != 2 {
		t.Errorf("positives after like = %d, want 2", c.Positives)
	}
}

func TestStore_AddInteractions_allOrNothing(t *testing.T) {
	s := mustOpenStore(t)
	mustAdd(t, s, ev("a", "x", "view"))
	before := mustCounts(t, s)
	_, err := s.AddInteractions(context.Background(), []api.Interaction{ev("b", "y", "view"), ev("c", "z", "teleport")})
	if api.ErrorCode(err) != api.CodeInvalid {
		t.Fatalf("err = %v, want invalid", err)
	}
	var ae *api.Error
	if !errors.As(err, &ae) || ae.Details[0].Field != "interactions[1].type" {
		t.Fatalf("err = %#v, want the field interactions[1].type named", err)
	}
	if after := mustCounts(t, s); after != before {
		t.Fatalf("counts changed by a rejected batch: %+v → %+v", before, after)
	}
}

// afterDelete stores a's views of x and y and b's view of x, runs del and
// checks the counts it leaves against want.
func afterDelete(t *testing.T, del func(*Store) error, want api.Counts) *Store {
	t.Helper()
	s := mustOpenStore(t)
	mustAdd(t, s, ev("a", "x", "view"), ev("a", "y", "view"), ev("b", "x", "view"))
	if err := del(s); err != nil {
		t.Fatal(err)
	}
	if got := mustCounts(t, s); got != want {
		t.Fatalf("counts = %+v, want %+v", got, want)
	}
	return s
}

func TestStore_DeleteUser(t *testing.T) {
	ctx := context.Background()
	s := afterDelete(t, func(s *Store) error { return s.DeleteUser(ctx, "a") }, api.Counts{Users: 1, Items: 2, Interactions: 1, Positives: 1, Events: 1})
	if _, err := s.User(ctx, "a"); api.ErrorCode(err) != api.CodeNotFound {
		t.Fatalf("User(a) err = %v, want not_found", err)
	}
	if it, _ := s.Item(ctx, "x"); it.Positives != 1 {
		t.Fatalf("x popularity = %d, want 1", it.Positives)
	}
	if err := s.DeleteUser(ctx, "a"); api.ErrorCode(err) != api.CodeNotFound {
		t.Fatalf("second delete err = %v, want not_found", err)
	}
	snap, err := s.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Users) != 1 || snap.UserIDs[snap.Users[0]] != "b" {
		t.Fatalf("snapshot pairs = %v, want only b's", snap.Users)
	}
}

func TestStore_DeleteItem(t *testing.T) {
	ctx := context.Background()
	s := afterDelete(t, func(s *Store) error { return s.DeleteItem(ctx, "x") }, api.Counts{Users: 2, Items: 1, Interactions: 1, Positives: 1, Events: 1})
	u, _ := s.User(ctx, "b")
	if u.Items != 0 || u.Positives != 0 {
		t.Fatalf("user b = %+v, want no items left", u)
	}
	// The item comes back as a new entry with no history.
	mustAdd(t, s, ev("c", "x", "view"))
	if it, _ := s.Item(ctx, "x"); it.Positives != 1 {
		t.Fatalf("recreated x popularity = %d, want 1", it.Positives)
	}
}

func TestStore_DeleteInteraction(t *testing.T) {
	s := mustOpenStore(t)
	ctx := context.Background()
	mustAdd(t, s, ev("a", "x", "view"), ev("a", "x", "view"), ev("a", "y", "view"))
	if err := s.DeleteInteraction(ctx, "a", "x"); err != nil {
		t.Fatal(err)
	}
	want := api.Counts{Users: 1, Items: 2, Interactions: 1, Positives: 1, Events: 1}
	if got := mustCounts(t, s); got != want {
		t.Fatalf("counts = %+v, want %+v", got, want)
	}
	for _, c := range []struct{ user, item string }{{"a", "x"}, {"zz", "x"}, {"a", "zz"}} {
		if err := s.DeleteInteraction(ctx, c.user, c.item); api.ErrorCode(err) != api.CodeNotFound {
			t.Errorf("DeleteInteraction(%s, %s) err = %v, want not_found", c.user, c.item, err)
		}
	}
}

func TestStore_History_pages(t *testing.T) {
	s := mustOpenStore(t)
	ctx := context.Background()
	var evs []api.Interaction
	for _, item := range []string{"i1", "i2", "i3", "i4", "i5"} {
		evs = append(evs, ev("a", item, "view"))
	}
	mustAdd(t, s, evs...)
	var got []string
	cursor := ""
	for pages := 0; ; pages++ {
		if pages > 5 {
			t.Fatal("pagination does not end")
		}
		entries, next, err := s.History(ctx, "a", api.Page{Cursor: cursor, Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			got = append(got, e.ItemID)
		}
		if next == "" {
			break
		}
		cursor = next
	}
	if want := []string{"i1", "i2", "i3", "i4", "i5"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("paged history = %v, want %v", got, want)
	}
	if _, _, err := s.History(ctx, "a", api.Page{Cursor: "!!", Limit: 2}); api.ErrorCode(err) != api.CodeInvalid {
		t.Fatalf("bad cursor err = %v, want invalid", err)
	}
}

func TestStore_PutItems_replaceKeepsHistory(t *testing.T) {
	s := mustOpenStore(t)
	ctx := context.Background()
	mustAdd(t, s, ev("a", "x", "view"))
	if err := s.PutItems(ctx, []api.Item{{ID: "x", Features: map[string]float64{"f": 2}, Categories: []string{"c"}, Hidden: true}}); err != nil {
		t.Fatal(err)
	}
	it, err := s.Item(ctx, "x")
	if err != nil {
		t.Fatal(err)
	}
	if it.Positives != 1 || !it.Hidden || it.Features["f"] != 2 {
		t.Fatalf("item = %+v", it)
	}
	if c := mustCounts(t, s); c.Items != 1 {
		t.Fatalf("items = %d, want 1", c.Items)
	}
	items, next, err := s.Items(ctx, api.Page{Limit: 10})
	if err != nil || len(items) != 1 || next != "" {
		t.Fatalf("Items = %v %q %v", items, next, err)
	}
}

func TestStore_Snapshot_features(t *testing.T) {
	s := mustOpenStore(t)
	ctx := context.Background()
	if err := s.PutItems(ctx, []api.Item{
		{ID: "x", Features: map[string]float64{"a": 1, "b": 2}},
		{ID: "y", Features: map[string]float64{"b": 3}},
		{ID: "z"},
	}); err != nil {
		t.Fatal(err)
	}
	mustAdd(t, s, ev("u", "y", "view"), evv("u", "x", "rating", 1))
	snap, err := s.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(snap.FeatureNames, []string{"a", "b"}) {
		t.Fatalf("feature names = %v", snap.FeatureNames)
	}
	x, y, z := 1, 2, 3 // dense indices in insertion order, from 1
	if snap.ItemIDs[x] != "x" || snap.ItemIDs[y] != "y" || snap.ItemIDs[z] != "z" {
		t.Fatalf("item ids = %v", snap.ItemIDs)
	}
	if !reflect.DeepEqual(snap.Features[x], []float64{1, 2}) || !reflect.DeepEqual(snap.Features[y], []float64{0, 3}) || snap.Features[z] != nil {
		t.Fatalf("features = %v", snap.Features)
	}
	if len(snap.Users) != 1 || snap.ItemIDs[snap.Items[0]] != "y" {
		t.Fatalf("positive pairs = %v/%v, want only (u, y)", snap.Users, snap.Items)
	}
	if snap.Events != 2 {
		t.Fatalf("events = %d, want 2", snap.Events)
	}
}

func TestStore_Open_reopenKeepsData(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.db")
	s := mustOpen(t, path)
	mustAdd(t, s, ev("a", "x", "view"))
	if _, err := Open(path, Options{Timeout: 50 * time.Millisecond}); err == nil {
		t.Fatal("a second open of a locked database succeeded")
	}
	s.Close()
	s = mustOpen(t, path)
	defer s.Close()
	if c := mustCounts(t, s); c.Events != 1 {
		t.Fatalf("events after reopen = %d, want 1", c.Events)
	}
}

func TestStore_Open_readOnlyRefusesWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ro.db")
	s := mustOpen(t, path)
	mustAdd(t, s, ev("a", "x", "view"))
	s.Close()
	ro, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	_, err = ro.AddInteractions(context.Background(), []api.Interaction{ev("b", "y", "view")})
	if api.ErrorCode(err) != api.CodeUnavailable {
		t.Fatalf("write to read-only store err = %v, want unavailable", err)
	}
}

func TestStore_Activity(t *testing.T) {
	s := mustOpenStore(t)
	day := func(d int) time.Time { return time.Date(2026, 3, d, 12, 0, 0, 0, time.UTC) }
	mk := func(u, i string, d int) api.Interaction {
		return api.Interaction{UserID: u, ItemID: i, Type: "view", Timestamp: day(d)}
	}
	mustAdd(t, s, mk("a", "x", 1), mk("a", "y", 1), mk("b", "x", 3))
	mustAdd(t, s, mk("c", "x", 3), mk("c", "z", 2))
	got, err := s.Activity(context.Background(), 10)
	if err != nil {
		t.Fatal(err)
	}
	want := []api.DayCount{{Day: "2026-03-01", Events: 2}, {Day: "2026-03-02", Events: 1}, {Day: "2026-03-03", Events: 2}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("activity = %v, want %v", got, want)
	}
	if got, _ := s.Activity(context.Background(), 1); !reflect.DeepEqual(got, want[2:]) {
		t.Fatalf("last day = %v", got)
	}
}

// TestStore_AddInteractions_itemIndexFollowsPairs: whatever mix of repeats,
// negatives and values arrives, the item → user index holds exactly the
// pairs, each with the pair's current flags (repeats that change no flag
// skip the index write).
func TestStore_AddInteractions_itemIndexFollowsPairs(t *testing.T) {
	s := mustOpenStore(t)
	types := []string{"view", "view", "like", "dislike", "click", "view"}
	for round := 0; round < 3; round++ {
		var evs []api.Interaction
		for k := 0; k < 60; k++ {
			e := ev(fmt.Sprintf("u%d", k%7), fmt.Sprintf("i%d", (k*round+k/3)%11), types[(k+round)%len(types)])
			evs = append(evs, e)
		}
		mustAdd(t, s, evs...)
	}
	mustAdd(t, s, evv("u1", "i1", "rating", 5), evv("u1", "i1", "rating", 1))
	err := s.db.View(func(tx *bolt.Tx) error {
		pairs, index := tx.Bucket(bucketPairs), tx.Bucket(bucketItemUsers)
		n := 0
		err := pairs.ForEach(func(k, v []byte) error {
			n++
			got := index.Get(pairKey(binary.BigEndian.Uint64(k[8:]), binary.BigEndian.Uint64(k)))
			if len(got) != 1 || got[0] != v[32] {
				t.Errorf("pair %x: index holds %v, pair flags %d", k, got, v[32])
			}
			return nil
		})
		if m := index.Stats().KeyN; m != n {
			t.Errorf("index has %d entries for %d pairs", m, n)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// freelistSynced reads the file's newest bbolt meta page and reports
// whether it points at a written list of free pages (bbolt's meta layout:
// a 16-byte page header, then magic, version, page size and flags as
// 4 bytes each, the root bucket in 16, the freelist page id, the page
// count and the transaction id in 8 bytes each, little-endian).
func freelistSynced(tb testing.TB, path string) bool {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	pageSize := int(binary.LittleEndian.Uint32(b[24:]))
	newest, synced := uint64(0), false
	for _, off := range []int{0, pageSize} {
		m := b[off:]
		if txid := binary.LittleEndian.Uint64(m[64:]); txid >= newest {
			newest, synced = txid, binary.LittleEndian.Uint64(m[48:]) != math.MaxUint64
		}
	}
	return synced
}

// TestStore_Close_writesFreelist: commits leave the free-page list out
// (fast writes), Close writes it so the next Open need not walk the whole
// file, and the next write drops it again (a crash then leaves a file
// whose Open rebuilds the list).
func TestStore_Close_writesFreelist(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	mustAdd(t, s, ev("a", "x", "view"))
	if freelistSynced(t, path) {
		t.Fatal("a write commit wrote the free-page list")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if !freelistSynced(t, path) {
		t.Fatal("Close left no free-page list: the next Open walks every page")
	}
	if s, err = Open(path, Options{}); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	mustAdd(t, s, ev("b", "x", "view"))
	if freelistSynced(t, path) {
		t.Fatal("the list written at Close survived a later write commit")
	}
	if c := mustCounts(t, s); c.Events != 2 {
		t.Fatalf("events after reopen = %d, want 2", c.Events)
	}
}
