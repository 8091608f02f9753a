package storagetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"recsys/api"
	"recsys/storage"
)

// Options are what a contract test asks of a new store.
type Options struct {
	Policy api.Policy       // zero: api.DefaultPolicy()
	Now    func() time.Time // nil: time.Now
}

// Opener opens an empty store for one test; the store is closed when the
// test ends.
type Opener func(tb testing.TB, o Options) storage.Backend

// Contract runs the storage contract against the stores open makes: the
// same assertions for every adapter, through the public interface only.
func Contract(t *testing.T, open Opener) {
	for _, c := range contractCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.run(t, open)
		})
	}
}

var contractCases = []struct {
	name string
	run  func(t *testing.T, open Opener)
}{
	{"counts", testCounts},
	{"policy", testPolicy},
	{"all or nothing", testAllOrNothing},
	{"timestamps", testTimestamps},
	{"delete user", testDeleteUser},
	{"delete item", testDeleteItem},
	{"delete interaction", testDeleteInteraction},
	{"history pages", testHistoryPages},
	{"items pages", testItemsPages},
	{"users pages", testUsersPages},
	{"put items", testPutItems},
	{"update item", testUpdateItem},
	{"snapshot", testSnapshot},
	{"activity", testActivity},
	{"activity after deletes", testActivityAfterDeletes},
	{"profile and lookups", testProfile},
	{"versions", testVersions},
	{"models", testModels},
	{"jobs", testJobs},
	{"reports", testReports},
	{"concurrent ingest", testConcurrentIngest},
	{"concurrent updates", testConcurrentUpdates},
	{"concurrent deletes", testConcurrentDeletes},
	{"invariants", testInvariants},
	{"dump and restore", testDumpRestore},
	{"online", testOnline},
	{"online pruning", testOnlinePrune},
	{"experiments", testExperiments},
}

var bg = context.Background()

// Ev is a view event of user on item.
func Ev(user, item, typ string) api.Interaction {
	return api.Interaction{UserID: user, ItemID: item, Type: typ}
}

// Evv is an event with a value.
func Evv(user, item, typ string, v float64) api.Interaction {
	return api.Interaction{UserID: user, ItemID: item, Type: typ, Value: v, HasValue: true}
}

// At is a view event on a day of March 2026, at noon UTC.
func At(user, item string, day int) api.Interaction {
	return api.Interaction{UserID: user, ItemID: item, Type: "view", Timestamp: time.Date(2026, 3, day, 12, 0, 0, 0, time.UTC)}
}

// MustAdd stores a batch or fails the test.
func MustAdd(tb testing.TB, s storage.Backend, evs ...api.Interaction) {
	tb.Helper()
	if n, err := s.AddInteractions(bg, evs); err != nil || n != len(evs) {
		tb.Fatalf("AddInteractions = %d, %v; want %d", n, err, len(evs))
	}
}

// MustCounts reads the counters or fails the test.
func MustCounts(tb testing.TB, s storage.Backend) api.Counts {
	tb.Helper()
	c, err := s.Counts(bg)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

func mustUser(tb testing.TB, s storage.Backend, id string) api.User {
	tb.Helper()
	u, err := s.User(bg, id)
	if err != nil {
		tb.Fatal(err)
	}
	return u
}

func mustItem(tb testing.TB, s storage.Backend, id string) api.Item {
	tb.Helper()
	it, err := s.Item(bg, id)
	if err != nil {
		tb.Fatal(err)
	}
	return it
}

func testCounts(t *testing.T, open Opener) {
	s := open(t, Options{})
	MustAdd(t, s, Ev("a", "x", "view"), Ev("a", "x", "view"), Ev("a", "y", "click"), Ev("b", "x", "purchase"))
	if got, want := MustCounts(t, s), (api.Counts{Users: 2, Items: 2, Interactions: 3, Positives: 3, Events: 4}); got != want {
		t.Fatalf("counts = %+v, want %+v", got, want)
	}
	if u := mustUser(t, s, "a"); u.Items != 2 || u.Positives != 2 || u.Events != 3 {
		t.Fatalf("user a = %+v, want 2 items, 2 positives, 3 events", u)
	}
	if it := mustItem(t, s, "x"); it.Positives != 2 {
		t.Fatalf("item x popularity = %d, want 2", it.Positives)
	}
	if n, err := s.AddInteractions(bg, nil); err != nil || n != 0 {
		t.Fatalf("empty batch = %d, %v", n, err)
	}
}

// names maps dense item indices to ids, sorted.
func names(tb testing.TB, s storage.Backend, idx []uint32) []string {
	tb.Helper()
	cat, err := s.Catalogue(bg)
	if err != nil {
		tb.Fatal(err)
	}
	var out []string
	for _, i := range idx {
		out = append(out, cat.ItemIDs[i])
	}
	sort.Strings(out)
	return out
}

func testPolicy(t *testing.T, open Opener) {
	s := open(t, Options{})
	// rating>=4 in the default policy: 3 is not relevant, 5 is.
	MustAdd(t, s, Evv("a", "low", "rating", 3), Evv("a", "high", "rating", 5), Ev("a", "hated", "view"))
	MustAdd(t, s, Ev("a", "hated", "dislike"))
	prof, err := s.Profile(bg, "a")
	if err != nil {
		t.Fatal(err)
	}
	if got := names(t, s, prof.Positive); !reflect.DeepEqual(got, []string{"high"}) {
		t.Errorf("positive = %v, want [high]", got)
	}
	if got := names(t, s, prof.Negative); !reflect.DeepEqual(got, []string{"hated"}) {
		t.Errorf("negative = %v, want [hated]", got)
	}
	if got := names(t, s, prof.Consumed); !reflect.DeepEqual(got, []string{"hated", "high", "low"}) {
		t.Errorf("consumed = %v, want all three", got)
	}
	if c := MustCounts(t, s); c.Positives != 1 {
		t.Errorf("positives = %d, want 1 (the dislike revoked the view)", c.Positives)
	}
	// A later positive event clears the negative one.
	MustAdd(t, s, Ev("a", "hated", "like"))
	if c := MustCounts(t, s); c.Positives != 2 {
		t.Errorf("positives after like = %d, want 2", c.Positives)
	}
	// A custom policy: the store applies the one it was opened with.
	pol, err := api.ParsePolicy("purchase,rating>=2")
	if err != nil {
		t.Fatal(err)
	}
	p := open(t, Options{Policy: pol})
	MustAdd(t, p, Evv("a", "x", "rating", 1), Ev("a", "y", "purchase"), Evv("b", "x", "rating", 2))
	if c := MustCounts(t, p); c.Positives != 2 || c.Events != 3 {
		t.Errorf("custom policy counts = %+v, want 2 positives of 3 events", c)
	}
	if _, err := p.AddInteractions(bg, []api.Interaction{Ev("a", "x", "like")}); api.ErrorCode(err) != api.CodeInvalid {
		t.Errorf("a type outside the policy: err = %v, want invalid", err)
	}
}

func testAllOrNothing(t *testing.T, open Opener) {
	s := open(t, Options{})
	MustAdd(t, s, Ev("a", "x", "view"))
	before := MustCounts(t, s)
	_, err := s.AddInteractions(bg, []api.Interaction{Ev("b", "y", "view"), Ev("c", "z", "teleport")})
	if api.ErrorCode(err) != api.CodeInvalid {
		t.Fatalf("err = %v, want invalid", err)
	}
	var ae *api.Error
	if !errors.As(err, &ae) || ae.Details[0].Field != "interactions[1].type" {
		t.Fatalf("err = %#v, want the field interactions[1].type named", err)
	}
	if after := MustCounts(t, s); after != before {
		t.Fatalf("counts changed by a rejected batch: %+v → %+v", before, after)
	}
	if _, err := s.User(bg, "b"); api.ErrorCode(err) != api.CodeNotFound {
		t.Fatalf("user b of a rejected batch: err = %v, want not_found", err)
	}
	// A cancelled request stores nothing either.
	ctx, cancel := context.WithCancel(bg)
	cancel()
	if _, err := s.AddInteractions(ctx, []api.Interaction{Ev("d", "x", "view")}); err == nil {
		t.Fatal("a cancelled batch was stored")
	}
	if after := MustCounts(t, s); after != before {
		t.Fatalf("counts changed by a cancelled batch: %+v → %+v", before, after)
	}
	// Indices taken by a rejected batch are not skipped: the next new
	// user and item get the next ones.
	MustAdd(t, s, Ev("e", "w", "view"))
	snap, err := s.Snapshot(bg)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(snap.UserIDs, []string{"", "a", "e"}) || !reflect.DeepEqual(snap.ItemIDs, []string{"", "x", "w"}) {
		t.Fatalf("ids = %q / %q, want dense from 1 without gaps", snap.UserIDs, snap.ItemIDs)
	}
}

func testTimestamps(t *testing.T, open Opener) {
	now := time.Date(2026, 5, 1, 10, 0, 0, 123456789, time.UTC)
	s := open(t, Options{Now: func() time.Time { return now }})
	early := time.Date(2026, 4, 1, 8, 0, 0, 987654321, time.UTC)
	MustAdd(t, s, api.Interaction{UserID: "a", ItemID: "x", Type: "view", Timestamp: early}, Ev("a", "y", "view"))
	u := mustUser(t, s, "a")
	if !u.CreatedAt.Equal(early) || !u.LastSeen.Equal(now) {
		t.Fatalf("user a created %v, last seen %v; want %v and %v", u.CreatedAt, u.LastSeen, early, now)
	}
	h, _, err := s.History(bg, "a", api.Page{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != 2 || !h[0].FirstSeen.Equal(early) || !h[1].LastSeen.Equal(now) {
		t.Fatalf("history = %+v", h)
	}
	if it := mustItem(t, s, "x"); !it.CreatedAt.Equal(now) || !it.UpdatedAt.Equal(now) {
		t.Fatalf("item created by an event: %+v, want created at the server time", it)
	}
	// An older event does not change the latest type or value.
	MustAdd(t, s, api.Interaction{UserID: "a", ItemID: "y", Type: "click", Timestamp: early})
	h, _, _ = s.History(bg, "a", api.Page{Limit: 10})
	if h[1].LastType != "view" || h[1].Count != 2 || !h[1].FirstSeen.Equal(now) {
		t.Fatalf("after an older event: %+v", h[1])
	}
}

func testDeleteUser(t *testing.T, open Opener) {
	s := open(t, Options{})
	MustAdd(t, s, Ev("a", "x", "view"), Ev("a", "y", "view"), Ev("b", "x", "view"))
	if err := s.DeleteUser(bg, "a"); err != nil {
		t.Fatal(err)
	}
	if got, want := MustCounts(t, s), (api.Counts{Users: 1, Items: 2, Interactions: 1, Positives: 1, Events: 1}); got != want {
		t.Fatalf("counts = %+v, want %+v", got, want)
	}
	if _, err := s.User(bg, "a"); api.ErrorCode(err) != api.CodeNotFound {
		t.Fatalf("User(a) err = %v, want not_found", err)
	}
	if it := mustItem(t, s, "x"); it.Positives != 1 {
		t.Fatalf("x popularity = %d, want 1", it.Positives)
	}
	if err := s.DeleteUser(bg, "a"); api.ErrorCode(err) != api.CodeNotFound {
		t.Fatalf("second delete err = %v, want not_found", err)
	}
	snap, err := s.Snapshot(bg)
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Users) != 1 || snap.UserIDs[snap.Users[0]] != "b" {
		t.Fatalf("snapshot pairs = %v, want only b's", snap.Users)
	}
	if !reflect.DeepEqual(snap.UserIDs, []string{"", "", "b"}) {
		t.Fatalf("user ids = %q, want a's index left empty", snap.UserIDs)
	}
	// The user comes back with a new index and no history.
	MustAdd(t, s, Ev("a", "y", "view"))
	if u := mustUser(t, s, "a"); u.Items != 1 || u.Events != 1 {
		t.Fatalf("recreated a = %+v", u)
	}
	// UserIDs names the users of a trained model's snapshot; a new user's
	// dense index is certain once a snapshot holds it (bbolt assigns it
	// when the event log's tail is applied).
	if _, err := s.Snapshot(bg); err != nil {
		t.Fatal(err)
	}
	if ids, _ := s.UserIDs(bg, []uint32{1, 2, 3, 9}); !reflect.DeepEqual(ids, []string{"", "b", "a", ""}) {
		t.Fatalf("UserIDs = %q", ids)
	}
}

func testDeleteItem(t *testing.T, open Opener) {
	s := open(t, Options{})
	MustAdd(t, s, Ev("a", "x", "view"), Ev("a", "y", "view"), Ev("b", "x", "view"))
	if err := s.DeleteItem(bg, "x"); err != nil {
		t.Fatal(err)
	}
	if got, want := MustCounts(t, s), (api.Counts{Users: 2, Items: 1, Interactions: 1, Positives: 1, Events: 1}); got != want {
		t.Fatalf("counts = %+v, want %+v", got, want)
	}
	if u := mustUser(t, s, "b"); u.Items != 0 || u.Positives != 0 || u.Events != 0 {
		t.Fatalf("user b = %+v, want no items left", u)
	}
	if err := s.DeleteItem(bg, "x"); api.ErrorCode(err) != api.CodeNotFound {
		t.Fatalf("second delete err = %v, want not_found", err)
	}
	// The item comes back as a new entry with no history.
	MustAdd(t, s, Ev("c", "x", "view"))
	if it := mustItem(t, s, "x"); it.Positives != 1 {
		t.Fatalf("recreated x popularity = %d, want 1", it.Positives)
	}
	cat, err := s.Catalogue(bg)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(cat.ItemIDs, []string{"", "", "y", "x"}) || cat.Index["x"] != 3 {
		t.Fatalf("catalogue ids = %q, index %v", cat.ItemIDs, cat.Index)
	}
}

func testDeleteInteraction(t *testing.T, open Opener) {
	s := open(t, Options{})
	MustAdd(t, s, Ev("a", "x", "view"), Ev("a", "x", "view"), Ev("a", "y", "view"))
	if err := s.DeleteInteraction(bg, "a", "x"); err != nil {
		t.Fatal(err)
	}
	if got, want := MustCounts(t, s), (api.Counts{Users: 1, Items: 2, Interactions: 1, Positives: 1, Events: 1}); got != want {
		t.Fatalf("counts = %+v, want %+v", got, want)
	}
	if u := mustUser(t, s, "a"); u.Items != 1 || u.Positives != 1 || u.Events != 1 {
		t.Fatalf("user a = %+v", u)
	}
	if it := mustItem(t, s, "x"); it.Positives != 0 {
		t.Fatalf("x popularity = %d, want 0", it.Positives)
	}
	for _, c := range []struct{ user, item string }{{"a", "x"}, {"zz", "x"}, {"a", "zz"}} {
		if err := s.DeleteInteraction(bg, c.user, c.item); api.ErrorCode(err) != api.CodeNotFound {
			t.Errorf("DeleteInteraction(%s, %s) err = %v, want not_found", c.user, c.item, err)
		}
	}
	if in, _ := s.ItemsInteracted(bg, []uint32{1, 2, 3}); !reflect.DeepEqual(in, []bool{false, true, false}) {
		t.Fatalf("ItemsInteracted = %v", in)
	}
}

func testHistoryPages(t *testing.T, open Opener) {
	s := open(t, Options{})
	var evs []api.Interaction
	for _, item := range []string{"i1", "i2", "i3", "i4", "i5"} {
		evs = append(evs, Ev("a", item, "view"))
	}
	MustAdd(t, s, evs...)
	MustAdd(t, s, Ev("b", "i3", "view"))
	for limit := 1; limit <= 6; limit++ {
		var got []string
		cursor := ""
		for pages := 0; ; pages++ {
			if pages > 6 {
				t.Fatal("pagination does not end")
			}
			entries, next, err := s.History(bg, "a", api.Page{Cursor: cursor, Limit: limit})
			if err != nil {
				t.Fatal(err)
			}
			if len(entries) > limit || (next != "" && len(entries) != limit) {
				t.Fatalf("limit %d: page of %d with next %q", limit, len(entries), next)
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
			t.Fatalf("limit %d: paged history = %v, want %v", limit, got, want)
		}
	}
	if _, _, err := s.History(bg, "a", api.Page{Cursor: "!!", Limit: 2}); api.ErrorCode(err) != api.CodeInvalid {
		t.Fatalf("bad cursor err = %v, want invalid", err)
	}
	if _, _, err := s.History(bg, "nobody", api.Page{Limit: 2}); api.ErrorCode(err) != api.CodeNotFound {
		t.Fatalf("unknown user err = %v, want not_found", err)
	}
	// A cursor past the end, the last index included, gives an empty page.
	for _, c := range []string{storage.EncodeIndexCursor(5), storage.EncodeIndexCursor(1<<64 - 1)} {
		if h, next, err := s.History(bg, "a", api.Page{Cursor: c, Limit: 2}); err != nil || len(h) != 0 || next != "" {
			t.Fatalf("cursor past the end: %v %q %v", h, next, err)
		}
	}
	// A user whose pairs are all deleted has an empty history.
	if err := s.DeleteInteraction(bg, "b", "i3"); err != nil {
		t.Fatal(err)
	}
	if h, next, err := s.History(bg, "b", api.Page{Limit: 2}); err != nil || len(h) != 0 || next != "" {
		t.Fatalf("empty history: %v %q %v", h, next, err)
	}
}

// naturalIDs are ids in the natural order of the listings, written out by
// hand: digit runs by their value (leading zeros dropped, ties broken by
// the ids' bytes, so 007 before 7), numbers past 64 bits included, a run
// placed against other bytes where a digit would be (- before it, letters
// after), everything else byte by byte (upper case before lower case
// before multi-byte UTF-8).
var naturalIDs = []string{"-5", "0", "00", "1", "2", "007", "7", "9", "10", "100", "1000", "1001",
	"99999999999999999999", "100000000000000000000", "B", "Z9", "a", "a b", "a-1", "a02", "a2", "a2b", "a10",
	"b", "x1y9", "x1y10", "zz", "é"}

// shuffled is ids in an order unlike the natural one: reversed halves.
func shuffled(ids []string) []string {
	out := append([]string(nil), ids[len(ids)/2:]...)
	slices.Reverse(out)
	return append(out, ids[:len(ids)/2]...)
}

// pageAll lists by list at every page size from 1 to one past the whole,
// checking that each size gives want, and that only a full page has a
// cursor.
func pageAll(t *testing.T, want []string, list func(api.Page) ([]string, string, error)) {
	t.Helper()
	for limit := 1; limit <= len(want)+1; limit++ {
		var got []string
		cursor := ""
		for pages := 0; pages <= len(want); pages++ {
			page, next, err := list(api.Page{Cursor: cursor, Limit: limit})
			if err != nil {
				t.Fatal(err)
			}
			if next != "" && len(page) != limit {
				t.Fatalf("limit %d: page of %d with next %q", limit, len(page), next)
			}
			got = append(got, page...)
			if next == "" {
				break
			}
			cursor = next
		}
		if !slices.Equal(got, want) {
			t.Fatalf("limit %d: paged = %q, want %q", limit, got, want)
		}
	}
}

func testItemsPages(t *testing.T, open Opener) {
	s := open(t, Options{})
	var items []api.Item
	for _, id := range shuffled(naturalIDs) {
		items = append(items, api.Item{ID: id})
	}
	if err := s.PutItems(bg, items); err != nil {
		t.Fatal(err)
	}
	list := func(pg api.Page) ([]string, string, error) {
		page, next, err := s.Items(bg, pg)
		var ids []string
		for _, it := range page {
			ids = append(ids, it.ID)
		}
		return ids, next, err
	}
	pageAll(t, naturalIDs, list)
	if _, _, err := s.Items(bg, api.Page{Cursor: "!!", Limit: 2}); api.ErrorCode(err) != api.CodeInvalid {
		t.Fatalf("bad cursor err = %v, want invalid", err)
	}
	// A cursor naming a deleted item still pages on after it, and one
	// naming an id never stored pages on from where it would be.
	if err := s.DeleteItem(bg, "a b"); err != nil {
		t.Fatal(err)
	}
	for cursor, want := range map[string]string{"a b": "a-1", "a1": "a02", "99": "100", "": "-5"} {
		page, _, err := s.Items(bg, api.Page{Cursor: storage.EncodeIDCursor(cursor), Limit: 1})
		if cursor == "" {
			page, _, err = s.Items(bg, api.Page{Limit: 1})
		}
		if err != nil || len(page) != 1 || page[0].ID != want {
			t.Fatalf("after cursor %q: %v %v, want %s", cursor, page, err, want)
		}
	}
	// Items created by events are listed in the same order.
	MustAdd(t, s, Ev("u", "a3", "view"), Ev("u", "8", "view"))
	want := slices.DeleteFunc(slices.Clone(naturalIDs), func(id string) bool { return id == "a b" })
	want = slices.Insert(want, slices.Index(want, "9"), "8")
	want = slices.Insert(want, slices.Index(want, "a10"), "a3")
	pageAll(t, want, list)
}

func testUsersPages(t *testing.T, open Opener) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := open(t, Options{Now: func() time.Time { return now }})
	list := func(pg api.Page) ([]string, string, error) {
		page, next, err := s.Users(bg, pg)
		var ids []string
		for _, u := range page {
			ids = append(ids, u.ID)
		}
		return ids, next, err
	}
	if page, next, err := s.Users(bg, api.Page{Limit: 10}); err != nil || len(page) != 0 || next != "" {
		t.Fatalf("no users: %v %q %v", page, next, err)
	}
	// Each user has one view of x; "10" a purchase of y too, later (both
	// positive under the default policy).
	var evs []api.Interaction
	for _, id := range shuffled(naturalIDs) {
		evs = append(evs, api.Interaction{UserID: id, ItemID: "x", Type: "view", Timestamp: now.Add(-time.Hour)})
	}
	evs = append(evs, api.Interaction{UserID: "10", ItemID: "y", Type: "purchase", Timestamp: now})
	MustAdd(t, s, evs...)
	pageAll(t, naturalIDs, list)
	page, next, err := s.Users(bg, api.Page{Cursor: storage.EncodeIDCursor("9"), Limit: 2})
	if err != nil || len(page) != 2 || next != storage.EncodeIDCursor("100") {
		t.Fatalf("the page after 9: %+v %q %v", page, next, err)
	}
	// The summary is GET /users/{id}'s.
	want := []api.User{
		{ID: "10", CreatedAt: now.Add(-time.Hour), LastSeen: now, Items: 2, Positives: 2, Events: 2},
		{ID: "100", CreatedAt: now.Add(-time.Hour), LastSeen: now.Add(-time.Hour), Items: 1, Positives: 1, Events: 1},
	}
	for k := range page {
		if !reflect.DeepEqual(page[k], want[k]) {
			t.Fatalf("user %d of the page = %+v, want %+v", k, page[k], want[k])
		}
		if u, err := s.User(bg, want[k].ID); err != nil || !reflect.DeepEqual(u, page[k]) {
			t.Fatalf("User(%s) = %+v %v, listed %+v", want[k].ID, u, err, page[k])
		}
	}
	if _, _, err := s.Users(bg, api.Page{Cursor: "@@", Limit: 2}); api.ErrorCode(err) != api.CodeInvalid {
		t.Fatalf("bad cursor err = %v, want invalid", err)
	}
	// A deleted user leaves the listing, and a cursor naming it pages on.
	if err := s.DeleteUser(bg, "a2"); err != nil {
		t.Fatal(err)
	}
	page, _, err = s.Users(bg, api.Page{Cursor: storage.EncodeIDCursor("a2"), Limit: 1})
	if err != nil || len(page) != 1 || page[0].ID != "a2b" {
		t.Fatalf("after deleted a2: %+v %v", page, err)
	}
	// A user created after the listing began is listed where it belongs.
	MustAdd(t, s, Ev("a3", "x", "view"))
	wantIDs := slices.DeleteFunc(slices.Clone(naturalIDs), func(id string) bool { return id == "a2" })
	wantIDs = slices.Insert(wantIDs, slices.Index(wantIDs, "a10"), "a3")
	pageAll(t, wantIDs, list)
}

func testPutItems(t *testing.T, open Opener) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	s := open(t, Options{Now: clock})
	MustAdd(t, s, Ev("a", "x", "view"))
	mu.Lock()
	now = now.Add(time.Hour)
	mu.Unlock()
	in := api.Item{ID: "x", Features: map[string]float64{"f": 2, "g": -0.1}, Categories: []string{"c", "d"},
		Labels: map[string]string{"title": "T"}, Hidden: true}
	if err := s.PutItems(bg, []api.Item{in, {ID: "y", Features: map[string]float64{}, Categories: []string{}}}); err != nil {
		t.Fatal(err)
	}
	it := mustItem(t, s, "x")
	want := in
	want.Positives, want.CreatedAt, want.UpdatedAt = 1, now.Add(-time.Hour), now
	if !reflect.DeepEqual(it, want) {
		t.Fatalf("item = %+v, want %+v", it, want)
	}
	if y := mustItem(t, s, "y"); y.Features != nil || y.Categories != nil || y.Labels != nil {
		t.Fatalf("empty fields = %+v, want nil", y)
	}
	if c := MustCounts(t, s); c.Items != 2 {
		t.Fatalf("items = %d, want 2", c.Items)
	}
	// A repeat within a batch: the last one wins, and it is one item.
	if err := s.PutItems(bg, []api.Item{{ID: "z", Hidden: true}, {ID: "z", Categories: []string{"k"}}}); err != nil {
		t.Fatal(err)
	}
	if z := mustItem(t, s, "z"); z.Hidden || !reflect.DeepEqual(z.Categories, []string{"k"}) {
		t.Fatalf("z = %+v", z)
	}
	items, next, err := s.Items(bg, api.Page{Limit: 10})
	if err != nil || len(items) != 3 || next != "" {
		t.Fatalf("Items = %v %q %v", items, next, err)
	}
	if _, err := s.Item(bg, "nothing"); api.ErrorCode(err) != api.CodeNotFound {
		t.Fatalf("missing item err = %v", err)
	}
}

func testUpdateItem(t *testing.T, open Opener) {
	s := open(t, Options{})
	MustAdd(t, s, Ev("a", "x", "view"))
	if err := s.PutItems(bg, []api.Item{{ID: "x", Labels: map[string]string{"title": "T"}, Categories: []string{"c"}}}); err != nil {
		t.Fatal(err)
	}
	before := mustItem(t, s, "x")
	counts := MustCounts(t, s)
	_, err := s.UpdateItem(bg, "nobody", func(it api.Item) (api.Item, error) {
		t.Error("change called for a missing item")
		return it, nil
	})
	if api.ErrorCode(err) != api.CodeNotFound {
		t.Fatalf("missing item err = %v, want not_found", err)
	}
	bad := api.FieldError("labels", "no")
	_, err = s.UpdateItem(bg, "x", func(it api.Item) (api.Item, error) {
		it.Hidden = true
		return it, bad
	})
	if !errors.Is(err, bad) {
		t.Fatalf("err = %v, want the change's error", err)
	}
	if got := mustItem(t, s, "x"); !reflect.DeepEqual(got, before) {
		t.Fatalf("a failed change changed the item: %+v → %+v", before, got)
	}
	got, err := s.UpdateItem(bg, "x", func(it api.Item) (api.Item, error) {
		if !reflect.DeepEqual(it, before) {
			t.Errorf("change saw %+v, want %+v", it, before)
		}
		it.Hidden, it.Features = true, map[string]float64{"f": 1}
		return it, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	stored := mustItem(t, s, "x")
	if !reflect.DeepEqual(got, stored) {
		t.Fatalf("answered %+v, stored %+v", got, stored)
	}
	if !stored.Hidden || stored.Features["f"] != 1 || stored.Labels["title"] != "T" || stored.Positives != 1 ||
		!stored.CreatedAt.Equal(before.CreatedAt) {
		t.Fatalf("stored %+v, want hidden with feature f, its label, its positive and its creation time", stored)
	}
	if c := MustCounts(t, s); c != counts {
		t.Fatalf("counts %+v → %+v", counts, c)
	}
}

func testSnapshot(t *testing.T, open Opener) {
	s := open(t, Options{})
	if err := s.PutItems(bg, []api.Item{
		{ID: "x", Features: map[string]float64{"a": 1, "b": 2}, Categories: []string{"c1"}},
		{ID: "y", Features: map[string]float64{"b": 3}, Hidden: true},
		{ID: "z"},
	}); err != nil {
		t.Fatal(err)
	}
	MustAdd(t, s, Ev("u", "y", "view"), Evv("u", "x", "rating", 1), Ev("v", "z", "view"), Ev("v", "x", "like"), Ev("w", "y", "view"))
	MustAdd(t, s, Ev("w", "y", "dislike"))
	snap, err := s.Snapshot(bg)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(snap.FeatureNames, []string{"a", "b"}) {
		t.Fatalf("feature names = %v", snap.FeatureNames)
	}
	if !reflect.DeepEqual(snap.ItemIDs, []string{"", "x", "y", "z"}) || !reflect.DeepEqual(snap.UserIDs, []string{"", "u", "v", "w"}) {
		t.Fatalf("ids = %q / %q", snap.ItemIDs, snap.UserIDs)
	}
	if !reflect.DeepEqual(snap.Features, [][]float64{nil, {1, 2}, {0, 3}, nil}) {
		t.Fatalf("features = %v", snap.Features)
	}
	if !reflect.DeepEqual(snap.Hidden, []bool{false, false, true, false}) || !reflect.DeepEqual(snap.Categories, [][]string{nil, {"c1"}, nil, nil}) {
		t.Fatalf("hidden %v, categories %v", snap.Hidden, snap.Categories)
	}
	// Positive pairs in (user, item) order: (u, y), (v, x), (v, z).
	if !reflect.DeepEqual(snap.Users, []uint32{1, 2, 2}) || !reflect.DeepEqual(snap.Items, []uint32{2, 1, 3}) {
		t.Fatalf("positive pairs = %v/%v", snap.Users, snap.Items)
	}
	if snap.Events != 6 {
		t.Fatalf("events = %d, want 6", snap.Events)
	}
	names, feats, err := s.ItemFeatures(bg)
	if err != nil || !reflect.DeepEqual(names, snap.FeatureNames) || !reflect.DeepEqual(feats, snap.Features) {
		t.Fatalf("ItemFeatures = %v %v %v", names, feats, err)
	}
	cat, err := s.Catalogue(bg)
	if err != nil {
		t.Fatal(err)
	}
	want := &api.Catalogue{ItemIDs: snap.ItemIDs, Index: map[string]uint32{"x": 1, "y": 2, "z": 3},
		Hidden: snap.Hidden, Categories: snap.Categories, Popularity: []int64{0, 1, 1, 1}}
	if !reflect.DeepEqual(cat, want) {
		t.Fatalf("catalogue = %+v, want %+v", cat, want)
	}
	// An empty store has an empty snapshot.
	e, err := open(t, Options{}).Snapshot(bg)
	if err != nil || len(e.Users) != 0 || !reflect.DeepEqual(e.UserIDs, []string{""}) || e.FeatureNames != nil {
		t.Fatalf("empty snapshot = %+v, %v", e, err)
	}
}

func testActivity(t *testing.T, open Opener) {
	s := open(t, Options{})
	MustAdd(t, s, At("a", "x", 1), At("a", "y", 1), At("b", "x", 3))
	MustAdd(t, s, At("c", "x", 3), At("c", "z", 2))
	got, err := s.Activity(bg, 10)
	if err != nil {
		t.Fatal(err)
	}
	want := []api.DayCount{{Day: "2026-03-01", Events: 2}, {Day: "2026-03-02", Events: 1}, {Day: "2026-03-03", Events: 2}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("activity = %v, want %v", got, want)
	}
	if got, _ := s.Activity(bg, 1); !reflect.DeepEqual(got, want[2:]) {
		t.Fatalf("last day = %v", got)
	}
}

// activity returns the per-day counters as day → events, and their sum.
func activity(tb testing.TB, s storage.Backend) (map[string]int64, int64) {
	tb.Helper()
	days, err := s.Activity(bg, 3650)
	if err != nil {
		tb.Fatal(err)
	}
	out, sum := map[string]int64{}, int64(0)
	for _, d := range days {
		out[d.Day] = d.Events
		sum += d.Events
	}
	return out, sum
}

// testActivityAfterDeletes: deleting a user, an interaction or an item
// takes their events off the days they happened on, repeats on later days
// (in or out of order, in one batch or several) included, so the per-day
// counters always sum to the events counter, and a day left with no events
// disappears.
func testActivityAfterDeletes(t *testing.T, open Opener) {
	s := open(t, Options{})
	MustAdd(t, s, At("a", "x", 1), At("a", "x", 2), At("a", "x", 2), At("a", "y", 3), At("b", "x", 1))
	MustAdd(t, s, At("b", "y", 4), At("b", "y", 2), At("b", "y", 4), At("c", "z", 5), At("c", "x", 1))
	MustAdd(t, s, At("a", "x", 5), At("c", "z", 6))
	check := func(step string, want map[string]int64) {
		t.Helper()
		got, sum := activity(t, s)
		if c := MustCounts(t, s); sum != c.Events {
			t.Errorf("%s: per-day sum %d, events %d (%v)", step, sum, c.Events, got)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: per day %v, want %v", step, got, want)
		}
	}
	check("before deletes", map[string]int64{"2026-03-01": 3, "2026-03-02": 3, "2026-03-03": 1,
		"2026-03-04": 2, "2026-03-05": 2, "2026-03-06": 1})
	if err := s.DeleteUser(bg, "a"); err != nil { // x on 1, 2, 2, 5; y on 3
		t.Fatal(err)
	}
	check("after DeleteUser(a)", map[string]int64{"2026-03-01": 2, "2026-03-02": 1,
		"2026-03-04": 2, "2026-03-05": 1, "2026-03-06": 1})
	if err := s.DeleteInteraction(bg, "b", "y"); err != nil { // on 4, 2, 4
		t.Fatal(err)
	}
	check("after DeleteInteraction(b, y)", map[string]int64{"2026-03-01": 2, "2026-03-05": 1, "2026-03-06": 1})
	if err := s.DeleteItem(bg, "z"); err != nil { // c on 5, 6
		t.Fatal(err)
	}
	check("after DeleteItem(z)", map[string]int64{"2026-03-01": 2})
	MustAdd(t, s, At("b", "x", 7)) // a repeat on a later day, after the deletes
	if err := s.DeleteInteraction(bg, "b", "x"); err != nil {
		t.Fatal(err)
	}
	check("after b x again and its delete", map[string]int64{"2026-03-01": 1})
}

func testProfile(t *testing.T, open Opener) {
	s := open(t, Options{})
	if p, err := s.Profile(bg, "nobody"); err != nil || p.Known || p.Consumed != nil {
		t.Fatalf("unknown user profile = %+v, %v", p, err)
	}
	MustAdd(t, s, Ev("a", "p", "view"), Ev("b", "q", "view"), Ev("a", "q", "dislike"), Evv("a", "r", "rating", 2), Ev("a", "s", "like"))
	p, err := s.Profile(bg, "a")
	if err != nil {
		t.Fatal(err)
	}
	// Items p=1, q=2, r=3, s=4.
	want := api.Profile{Known: true, Consumed: []uint32{1, 2, 3, 4}, Positive: []uint32{1, 4}, Negative: []uint32{2}}
	if !reflect.DeepEqual(p, want) {
		t.Fatalf("profile = %+v, want %+v", p, want)
	}
	if err := s.DeleteInteraction(bg, "b", "q"); err != nil {
		t.Fatal(err)
	}
	p, err = s.Profile(bg, "b")
	if err != nil || !p.Known || len(p.Consumed) != 0 || len(p.Positive) != 0 || p.Negative != nil {
		t.Fatalf("profile without pairs = %+v, %v", p, err)
	}
	in, err := s.ItemsInteracted(bg, []uint32{4, 0, 2, 3, 1, 77})
	if err != nil || !reflect.DeepEqual(in, []bool{true, false, true, true, true, false}) {
		t.Fatalf("ItemsInteracted = %v, %v", in, err)
	}
	ids, err := s.UserIDs(bg, []uint32{2, 1, 0, 5})
	if err != nil || !reflect.DeepEqual(ids, []string{"b", "a", "", ""}) {
		t.Fatalf("UserIDs = %q, %v", ids, err)
	}
}

func testVersions(t *testing.T, open Opener) {
	s := open(t, Options{})
	i0, e0 := s.Versions()
	MustAdd(t, s, Ev("a", "x", "view"))
	i1, e1 := s.Versions()
	if e1 == e0 {
		t.Fatal("an event write left the events version as it was")
	}
	if err := s.PutItems(bg, []api.Item{{ID: "x", Hidden: true}}); err != nil {
		t.Fatal(err)
	}
	i2, _ := s.Versions()
	if i2 == i1 || i1 != i0 {
		t.Fatalf("items versions %d → %d → %d, want a change on the catalogue write only", i0, i1, i2)
	}
	if err := s.DeleteItem(bg, "x"); err != nil {
		t.Fatal(err)
	}
	if i3, e3 := s.Versions(); i3 == i2 || e3 == e1 {
		t.Fatal("deleting an item changes both versions")
	}
}

func testModels(t *testing.T, open Opener) {
	s := open(t, Options{})
	if m, err := s.Models(bg); err != nil || len(m) != 0 {
		t.Fatalf("no models = %v, %v", m, err)
	}
	if name, err := s.ActiveModel(bg); err != nil || name != "" {
		t.Fatalf("active = %q, %v", name, err)
	}
	var versions []string
	for range 3 {
		v, err := s.NewModelVersion(bg)
		if err != nil {
			t.Fatal(err)
		}
		versions = append(versions, v)
	}
	if !sort.StringsAreSorted(versions) || versions[0] == versions[1] || versions[1] == versions[2] {
		t.Fatalf("versions %v, want increasing", versions)
	}
	big := make([]byte, 3<<20+17) // more than one chunk of any reasonable size
	for k := range big {
		big[k] = byte(k * 7 / 3)
	}
	blobs := map[string][]byte{versions[0]: []byte("one"), versions[1]: big, versions[2]: {}}
	for _, v := range versions {
		info := api.ModelInfo{Name: "knn", Version: v, Params: map[string]float64{"k": 50}, Active: true}
		if err := s.PutModel(bg, info, blobs[v]); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.PutModel(bg, api.ModelInfo{Name: "als", Version: versions[0]}, []byte("als")); err != nil {
		t.Fatal(err)
	}
	if err := s.SetActiveModel(bg, "knn"); err != nil {
		t.Fatal(err)
	}
	ms, err := s.Models(bg)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range ms {
		got = append(got, fmt.Sprintf("%s/%s/%d/%v", m.Name, m.Version, m.Bytes, m.Active))
	}
	// Two versions of a name are kept; only the newest of the active one is active.
	want := []string{"als/" + versions[0] + "/3/false", "knn/" + versions[2] + "/0/true", "knn/" + versions[1] + fmt.Sprintf("/%d/false", len(big))}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("models = %v, want %v", got, want)
	}
	if ms[1].Params["k"] != 50 {
		t.Fatalf("params = %v", ms[1].Params)
	}
	for _, v := range versions[1:] {
		b, err := s.ModelBlob(bg, "knn", v)
		if err != nil || !bytes.Equal(b, blobs[v]) {
			t.Fatalf("blob %s: %d bytes, %v; want %d", v, len(b), err, len(blobs[v]))
		}
	}
	if _, err := s.ModelBlob(bg, "knn", versions[0]); api.ErrorCode(err) != api.CodeNotFound {
		t.Fatalf("dropped version err = %v, want not_found", err)
	}
	if name, err := s.ActiveModel(bg); err != nil || name != "knn" {
		t.Fatalf("active = %q, %v", name, err)
	}
}

func testJobs(t *testing.T, open Opener) {
	now := time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC)
	s := open(t, Options{Now: func() time.Time { return now }})
	var ids []string
	states := []string{api.JobSucceeded, api.JobRunning, api.JobQueued, api.JobFailed}
	for k, st := range states {
		id, err := s.NewJobID(bg)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
		if err := s.PutJob(bg, api.Job{ID: id, Kind: "train", Models: []string{"knn"}, State: st, Progress: float64(k) / 4,
			CreatedAt: now.Add(time.Duration(k) * time.Second)}); err != nil {
			t.Fatal(err)
		}
	}
	if !sort.StringsAreSorted(ids) {
		t.Fatalf("job ids %v, want increasing", ids)
	}
	j, err := s.Job(bg, ids[1])
	if err != nil || j.State != api.JobRunning || j.Progress != 0.25 || !j.CreatedAt.Equal(now.Add(time.Second)) {
		t.Fatalf("job = %+v, %v", j, err)
	}
	if _, err := s.Job(bg, "j999"); api.ErrorCode(err) != api.CodeNotFound {
		t.Fatalf("missing job err = %v", err)
	}
	list, err := s.Jobs(bg, 3)
	if err != nil || len(list) != 3 || list[0].ID != ids[3] || list[2].ID != ids[1] {
		t.Fatalf("jobs = %+v, %v; want the newest three, newest first", list, err)
	}
	// A second queued job, made after the others: RecoverJobs returns the
	// queued ones oldest first.
	later, err := s.NewJobID(bg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PutJob(bg, api.Job{ID: later, Kind: "evaluate", Models: []string{"knn"}, State: api.JobQueued, CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	queued, n, err := s.RecoverJobs(bg, "the server stopped")
	if err != nil || n != 1 || len(queued) != 2 || queued[0].ID != ids[2] || queued[1].ID != later || queued[0].State != api.JobQueued {
		t.Fatalf("RecoverJobs = %+v, %d, %v; want the running job failed and the queued %s and %s returned in order", queued, n, err, ids[2], later)
	}
	for k, id := range ids {
		j, _ := s.Job(bg, id)
		wantState := states[k]
		if k == 1 {
			wantState = api.JobFailed
			if j.Error != "the server stopped" || j.FinishedAt == nil || !j.FinishedAt.Equal(now) {
				t.Fatalf("interrupted job = %+v", j)
			}
		}
		if j.State != wantState {
			t.Fatalf("job %d state %s, want %s", k, j.State, wantState)
		}
	}
	if queued, n, _ := s.RecoverJobs(bg, "again"); n != 0 || len(queued) != 2 {
		t.Fatalf("second RecoverJobs = %d failed, %d queued; want 0 and the same 2", n, len(queued))
	}
}

func testReports(t *testing.T, open Opener) {
	now := time.Date(2026, 2, 3, 4, 5, 6, 789123456, time.UTC)
	s := open(t, Options{Now: func() time.Time { return now }})
	if list, err := s.Reports(bg); err != nil || len(list) != 0 {
		t.Fatalf("no reports = %v, %v", list, err)
	}
	a := &api.Report{Protocol: "holdout"}
	if err := s.PutReport(bg, a); err != nil {
		t.Fatal(err)
	}
	if a.ID == "" || !a.CreatedAt.Equal(now.Truncate(time.Millisecond)) {
		t.Fatalf("report = %+v, want an id and the time to the millisecond", a)
	}
	b := &api.Report{Protocol: "kfold"}
	if err := s.PutReport(bg, b); err != nil {
		t.Fatal(err)
	}
	if b.ID <= a.ID {
		t.Fatalf("ids %q then %q, want increasing", a.ID, b.ID)
	}
	got, err := s.Report(bg, a.ID)
	if err != nil || !reflect.DeepEqual(got, a) {
		t.Fatalf("report = %+v, %v; want %+v", got, err, a)
	}
	list, err := s.Reports(bg)
	if err != nil || len(list) != 2 || list[0].ID != b.ID {
		t.Fatalf("reports = %v, %v; want newest first", list, err)
	}
	if _, err := s.Report(bg, "r0"); api.ErrorCode(err) != api.CodeNotFound {
		t.Fatalf("missing report err = %v", err)
	}
}

// testConcurrentIngest: batches from many goroutines over overlapping
// users and items lose no event and double no count.
func testConcurrentIngest(t *testing.T, open Opener) {
	s := open(t, Options{})
	const workers, batches, per = 8, 10, 20
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range batches {
				evs := make([]api.Interaction, per)
				for k := range evs {
					evs[k] = Ev(fmt.Sprintf("u%d", (w+k)%5), fmt.Sprintf("i%d", (b*per+k)%13), "view")
				}
				if _, err := s.AddInteractions(bg, evs); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	c := MustCounts(t, s)
	if c.Events != workers*batches*per || c.Users != 5 || c.Items != 13 {
		t.Fatalf("counts = %+v, want %d events of 5 users on 13 items", c, workers*batches*per)
	}
	checkInvariants(t, s)
}

// testConcurrentUpdates: concurrent read-change-writes of one item each
// see the previous one's result.
func testConcurrentUpdates(t *testing.T, open Opener) {
	s := open(t, Options{})
	if err := s.PutItems(bg, []api.Item{{ID: "x", Features: map[string]float64{"n": 0}}}); err != nil {
		t.Fatal(err)
	}
	const n = 20
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := s.UpdateItem(bg, "x", func(it api.Item) (api.Item, error) {
				it.Features = map[string]float64{"n": it.Features["n"] + 1}
				return it, nil
			})
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if it := mustItem(t, s, "x"); it.Features["n"] != n {
		t.Fatalf("n = %v after %d increments", it.Features["n"], n)
	}
}

// testConcurrentDeletes: deletes of users, items and pairs racing with
// batches and catalogue writes on the same ids leave every counter equal
// to what it counts.
func testConcurrentDeletes(t *testing.T, open Opener) {
	s := open(t, Options{})
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	run := func(f func(k int) error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range 30 {
				if err := f(k); err != nil && api.ErrorCode(err) != api.CodeNotFound {
					errs <- err
					return
				}
			}
		}()
	}
	for w := range 3 {
		run(func(k int) error {
			evs := make([]api.Interaction, 10)
			for j := range evs {
				evs[j] = Ev(fmt.Sprintf("u%d", (w+j+k)%6), fmt.Sprintf("i%d", (j*k+w)%7), []string{"view", "like", "dislike"}[(j+k)%3])
			}
			_, err := s.AddInteractions(bg, evs)
			return err
		})
	}
	run(func(k int) error { return s.DeleteUser(bg, fmt.Sprintf("u%d", k%6)) })
	run(func(k int) error { return s.DeleteItem(bg, fmt.Sprintf("i%d", (k*3)%7)) })
	run(func(k int) error { return s.DeleteInteraction(bg, fmt.Sprintf("u%d", k%6), fmt.Sprintf("i%d", k%7)) })
	run(func(k int) error {
		return s.PutItems(bg, []api.Item{{ID: fmt.Sprintf("i%d", k%7), Categories: []string{"c"}}})
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	checkInvariants(t, s)
}

// testInvariants runs a mixed workload and checks that the counters agree
// with what they count.
func testInvariants(t *testing.T, open Opener) {
	s := open(t, Options{})
	Workload(t, s, 1)
	checkInvariants(t, s)
}

// Workload writes a fixed mix of events (every type of the default policy,
// values, timestamps over several days, repeats out of order), catalogue
// writes and deletes; seed varies it.
func Workload(tb testing.TB, s storage.Backend, seed int) {
	tb.Helper()
	types := []string{"view", "click", "like", "dislike", "purchase", "rating", "view", "skip"}
	x := uint32(seed*2654435761 + 12345)
	rnd := func(n int) int { x ^= x << 13; x ^= x >> 17; x ^= x << 5; return int(x % uint32(n)) }
	base := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	for round := range 6 {
		var evs []api.Interaction
		for range 80 {
			typ := types[rnd(len(types))]
			if typ == "skip" {
				typ = "view"
			}
			e := api.Interaction{UserID: fmt.Sprintf("u%02d", rnd(17)), ItemID: fmt.Sprintf("i%02d", rnd(23)), Type: typ}
			if typ == "rating" {
				e.Value, e.HasValue = float64(1+rnd(5)), true
			}
			if rnd(4) > 0 {
				e.Timestamp = base.Add(time.Duration(rnd(7*24*60)) * time.Minute)
			}
			evs = append(evs, e)
		}
		MustAdd(tb, s, evs...)
		if err := s.PutItems(bg, []api.Item{{ID: fmt.Sprintf("i%02d", rnd(23)), Features: map[string]float64{"f": float64(round)},
			Categories: []string{fmt.Sprintf("c%d", round%3)}}, {ID: fmt.Sprintf("n%d", round)}}); err != nil {
			tb.Fatal(err)
		}
		for _, err := range []error{
			s.DeleteInteraction(bg, fmt.Sprintf("u%02d", rnd(17)), fmt.Sprintf("i%02d", rnd(23))),
			s.DeleteUser(bg, fmt.Sprintf("u%02d", rnd(17))),
		} {
			if err != nil && api.ErrorCode(err) != api.CodeNotFound {
				tb.Fatal(err)
			}
		}
		if round%2 == 1 {
			if err := s.DeleteItem(bg, fmt.Sprintf("i%02d", rnd(23))); err != nil && api.ErrorCode(err) != api.CodeNotFound {
				tb.Fatal(err)
			}
		}
	}
}

// checkInvariants: the counters equal the sums of what they count.
func checkInvariants(tb testing.TB, s storage.Backend) {
	tb.Helper()
	c := MustCounts(tb, s)
	_, daySum := activity(tb, s)
	snap, err := s.Snapshot(bg)
	if err != nil {
		tb.Fatal(err)
	}
	var users, pairs, events, positives, pop int64
	for _, id := range snap.UserIDs {
		if id == "" {
			continue
		}
		users++
		u := mustUser(tb, s, id)
		pairs += u.Items
		events += u.Events
		positives += u.Positives
		h, _, err := s.History(bg, id, api.Page{Limit: 1000})
		if err != nil {
			tb.Fatal(err)
		}
		var n, pos int64
		for _, e := range h {
			n += e.Count
			if e.Positive {
				pos++
			}
		}
		if int64(len(h)) != u.Items || n != u.Events || pos != u.Positives {
			tb.Fatalf("user %s = %+v, history has %d pairs, %d events, %d positives", id, u, len(h), n, pos)
		}
	}
	cat, err := s.Catalogue(bg)
	if err != nil {
		tb.Fatal(err)
	}
	for _, p := range cat.Popularity {
		pop += p
	}
	if users != c.Users || pairs != c.Interactions || events != c.Events || positives != c.Positives ||
		pop != c.Positives || int64(len(snap.Users)) != c.Positives || daySum != c.Events {
		tb.Fatalf("counts %+v; sums: %d users, %d pairs, %d events, %d positives, popularity %d, snapshot %d, days %d",
			c, users, pairs, events, positives, pop, len(snap.Users), daySum)
	}
}
