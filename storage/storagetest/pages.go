package storagetest

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/storage/record"
)

// The contract on paged listings: a user's history, the catalogue and the
// users, in natural order, cursor by cursor.

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
	for _, c := range []string{record.EncodeIndexCursor(5), record.EncodeIndexCursor(1<<64 - 1)} {
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
		page, _, err := s.Items(bg, api.Page{Cursor: record.EncodeIDCursor(cursor), Limit: 1})
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
	page, next, err := s.Users(bg, api.Page{Cursor: record.EncodeIDCursor("9"), Limit: 2})
	if err != nil || len(page) != 2 || next != record.EncodeIDCursor("100") {
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
	page, _, err = s.Users(bg, api.Page{Cursor: record.EncodeIDCursor("a2"), Limit: 1})
	if err != nil || len(page) != 1 || page[0].ID != "a2b" {
		t.Fatalf("after deleted a2: %+v %v", page, err)
	}
	// A user created after the listing began is listed where it belongs.
	MustAdd(t, s, Ev("a3", "x", "view"))
	wantIDs := slices.DeleteFunc(slices.Clone(naturalIDs), func(id string) bool { return id == "a2" })
	wantIDs = slices.Insert(wantIDs, slices.Index(wantIDs, "a10"), "a3")
	pageAll(t, wantIDs, list)
}
