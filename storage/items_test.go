package storage

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"recsys/api"
)

// TestStore_UpdateItem checks the read-change-write of one item: the change
// sees the stored item, its result is stored with the item's index,
// creation time and interactions kept; a change that fails, or a missing
// item, changes nothing.
func TestStore_UpdateItem(t *testing.T) {
	s := mustOpenStore(t)
	ctx := context.Background()
	mustAdd(t, s, ev("a", "x", "view"))
	if err := s.PutItems(ctx, []api.Item{{ID: "x", Labels: map[string]string{"title": "T"}, Categories: []string{"c"}}}); err != nil {
		t.Fatal(err)
	}
	before, err := s.Item(ctx, "x")
	if err != nil {
		t.Fatal(err)
	}
	counts := mustCounts(t, s)

	t.Run("missing item", func(t *testing.T) {
		_, err := s.UpdateItem(ctx, "nobody", func(it api.Item) (api.Item, error) {
			t.Fatal("change called for a missing item")
			return it, nil
		})
		if api.ErrorCode(err) != api.CodeNotFound {
			t.Fatalf("err = %v, want not_found", err)
		}
		if got := mustCounts(t, s); got != counts {
			t.Fatalf("counts %+v → %+v", counts, got)
		}
	})
	t.Run("failed change", func(t *testing.T) {
		bad := api.FieldError("labels", "no")
		_, err := s.UpdateItem(ctx, "x", func(it api.Item) (api.Item, error) {
			it.Hidden = true
			return it, bad
		})
		if !errors.Is(err, bad) {
			t.Fatalf("err = %v, want the change's error", err)
		}
		if got, _ := s.Item(ctx, "x"); !reflect.DeepEqual(got, before) {
			t.Fatalf("item %+v → %+v", before, got)
		}
	})
	t.Run("change", func(t *testing.T) {
		got, err := s.UpdateItem(ctx, "x", func(it api.Item) (api.Item, error) {
			if !reflect.DeepEqual(it, before) {
				t.Fatalf("change saw %+v, want %+v", it, before)
			}
			it.Hidden, it.Features = true, map[string]float64{"f": 1}
			return it, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		stored, err := s.Item(ctx, "x")
		if err != nil || !reflect.DeepEqual(got, stored) {
			t.Fatalf("answered %+v, stored %+v (%v)", got, stored, err)
		}
		if !stored.Hidden || stored.Features["f"] != 1 || stored.Labels["title"] != "T" || stored.Positives != 1 ||
			!stored.CreatedAt.Equal(before.CreatedAt) {
			t.Fatalf("stored %+v, want hidden with feature f, its label, its positive and its creation time", stored)
		}
		if c := mustCounts(t, s); c != counts {
			t.Fatalf("counts %+v → %+v", counts, c)
		}
	})
}
