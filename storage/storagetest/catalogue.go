package storagetest

import (
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/recsys-engine/recsys/api"
)

// The contract on catalogue writes: putting and updating items.

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
