package storagetest

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/storage/backend"
)

// Compare fails the test unless a and b give the same answer to every
// public read: counters, activity, every user with their history (paged)
// and profile, the users paged, the catalogue (paged and whole), the
// snapshot, the features, the index lookups, the online counters and the
// experiments.
func Compare(tb testing.TB, a, b backend.Store) {
	tb.Helper()
	same := func(what string, x, y any) {
		tb.Helper()
		if !reflect.DeepEqual(x, y) {
			tb.Fatalf("%s differ:\n%+v\n%+v", what, reflect.Indirect(reflect.ValueOf(x)), reflect.Indirect(reflect.ValueOf(y)))
		}
	}
	both := func(what string, read func(s backend.Store) (any, error)) any {
		tb.Helper()
		x, errX := read(a)
		y, errY := read(b)
		same(what+" errors", api.ErrorCode(errX), api.ErrorCode(errY))
		same(what, x, y)
		return x
	}
	both("counts", func(s backend.Store) (any, error) { return s.Counts(bg) })
	// None is none, whether a store says nil or an empty list.
	both("online counters", func(s backend.Store) (any, error) {
		c, err := s.OnlineCounts(bg, "0001-01-01", "9999-12-31")
		return slices.Clip(append([]api.OnlineCount{}, c...)), err
	})
	both("experiments", func(s backend.Store) (any, error) {
		e, err := s.Experiments(bg)
		return slices.Clip(append([]api.Experiment{}, e...)), err
	})
	both("rules", func(s backend.Store) (any, error) {
		r, err := s.Rules(bg)
		return slices.Clip(append([]api.Rule{}, r...)), err
	})
	both("placements", func(s backend.Store) (any, error) {
		p, err := s.Placements(bg)
		return slices.Clip(append([]api.Placement{}, p...)), err
	})
	both("activity", func(s backend.Store) (any, error) { return s.Activity(bg, 3650) })
	snap := both("snapshot", func(s backend.Store) (any, error) {
		snap, err := s.Snapshot(bg)
		if snap != nil {
			snap.TakenAt = time.Time{} // the reading's time, not data
		}
		return snap, err
	}).(*api.Snapshot)
	both("catalogue", func(s backend.Store) (any, error) { return s.Catalogue(bg) })
	both("features", func(s backend.Store) (any, error) {
		n, f, err := s.ItemFeatures(bg)
		return []any{n, f}, err
	})
	var users, items []uint32
	for k := range snap.UserIDs {
		users = append(users, uint32(k))
	}
	for k := range snap.ItemIDs {
		items = append(items, uint32(k))
	}
	items = append(items, uint32(len(items)+5))
	both("user ids", func(s backend.Store) (any, error) { return s.UserIDs(bg, users) })
	both("items interacted", func(s backend.Store) (any, error) { return s.ItemsInteracted(bg, items) })
	for _, id := range append(snap.UserIDs, "nobody") {
		if id == "" {
			continue
		}
		both("user "+id, func(s backend.Store) (any, error) { return s.User(bg, id) })
		both("profile "+id, func(s backend.Store) (any, error) { return s.Profile(bg, id) })
		both("history "+id, func(s backend.Store) (any, error) {
			return allPages(3, func(pg api.Page) (any, string, error) { return s.History(bg, id, pg) })
		})
	}
	both("users", func(s backend.Store) (any, error) {
		return allPages(3, func(pg api.Page) (any, string, error) { return s.Users(bg, pg) })
	})
	both("items", func(s backend.Store) (any, error) {
		return allPages(4, func(pg api.Page) (any, string, error) { return s.Items(bg, pg) })
	})
	for _, id := range snap.ItemIDs {
		if id != "" {
			both("item "+id, func(s backend.Store) (any, error) { return s.Item(bg, id) })
		}
	}
}

// allPages reads a listing page by page and returns the pages and cursors.
func allPages(limit int, read func(api.Page) (any, string, error)) ([]any, error) {
	var pages []any
	cursor := ""
	for {
		page, next, err := read(api.Page{Cursor: cursor, Limit: limit})
		if err != nil {
			return pages, err
		}
		pages = append(pages, page, next)
		if next == "" {
			return pages, nil
		}
		cursor = next
	}
}
