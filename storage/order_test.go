package storage

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/storage/record"
)

// TestStore_Open_version5: a file of schema version 5 has no order buckets.
// Opened read-only it is listed in natural order all the same (its ids
// sorted in memory); its first writable open builds the buckets from its
// users and items, and the listings read them.
func TestStore_Open_version5(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v5.db")
	s := mustOpen(t, path)
	ctx := context.Background()
	mustAdd(t, s, ev("u10", "i10", "view"), ev("u9", "i9", "view"), ev("u100", "i100", "view"), ev("u2", "i2", "view"))
	if err := s.applyTail(); err != nil {
		t.Fatal(err)
	}
	// What version 5 wrote: everything but the order buckets.
	err := s.db.Update(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{bucketUserOrder, bucketItemOrder} {
			if err := tx.DeleteBucket(b); err != nil {
				return err
			}
		}
		return tx.Bucket(bucketMeta).Put(keySchema, u64(5))
	})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	wantUsers, wantItems := []string{"u2", "u9", "u10", "u100"}, []string{"i2", "i9", "i10", "i100"}
	check := func(t *testing.T, s *Store, what string) {
		t.Helper()
		for _, limit := range []int{1, 3, 10} {
			var users, items []string
			for cursor, more := "", true; more; {
				page, next, err := s.Users(ctx, api.Page{Cursor: cursor, Limit: limit})
				if err != nil {
					t.Fatalf("%s: Users: %v", what, err)
				}
				for _, u := range page {
					users = append(users, u.ID)
				}
				cursor, more = next, next != ""
			}
			for cursor, more := "", true; more; {
				page, next, err := s.Items(ctx, api.Page{Cursor: cursor, Limit: limit})
				if err != nil {
					t.Fatalf("%s: Items: %v", what, err)
				}
				for _, it := range page {
					items = append(items, it.ID)
				}
				cursor, more = next, next != ""
			}
			if !slices.Equal(users, wantUsers) || !slices.Equal(items, wantItems) {
				t.Fatalf("%s, limit %d: users %q, items %q; want %q, %q", what, limit, users, items, wantUsers, wantItems)
			}
		}
	}
	ro, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("read-only open of version 5: %v", err)
	}
	check(t, ro, "read-only version 5")
	ro.Close()
	s = mustOpen(t, path)
	defer s.Close()
	err = s.db.View(func(tx *bolt.Tx) error {
		if v := getU64(tx.Bucket(bucketMeta).Get(keySchema)); v != SchemaVersion {
			t.Errorf("schema %d after a writable open, want %d", v, SchemaVersion)
		}
		for _, b := range []struct {
			name []byte
			want []string
		}{{bucketUserOrder, wantUsers}, {bucketItemOrder, wantItems}} {
			var got []string
			if err := tx.Bucket(b.name).ForEach(func(k, _ []byte) error {
				got = append(got, record.OrderKeyID(k))
				return nil
			}); err != nil {
				return err
			}
			if !slices.Equal(got, b.want) {
				t.Errorf("%s after the migration: %q, want %q", b.name, got, b.want)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	check(t, s, "migrated")
}
