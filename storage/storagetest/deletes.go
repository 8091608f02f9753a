package storagetest

import (
	"reflect"
	"testing"

	"github.com/recsys-engine/recsys/api"
)

// The contract on deletes of users, items and single interactions.

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
