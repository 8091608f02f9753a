package storage

import (
	"bytes"
	"cmp"
	"context"
	"path/filepath"
	"slices"
	"testing"

	bolt "go.etcd.io/bbolt"

	"recsys/api"
)

func TestNaturalKey(t *testing.T) {
	cases := []struct {
		id   string
		want []byte
	}{
		{"a", []byte("a")},
		{"7", []byte("0\x00\x017")},
		{"007", []byte("0\x00\x017")},
		{"0", []byte("0\x00\x00")},
		{"a10b", []byte("a0\x00\x0210b")},
		{"x1y22", []byte("x0\x00\x011y0\x00\x0222")},
		{"é9", []byte("\xc3\xa90\x00\x019")},
	}
	for _, c := range cases {
		if got := NaturalKey(c.id); !bytes.Equal(got, c.want) {
			t.Errorf("NaturalKey(%q) = %q, want %q", c.id, got, c.want)
		}
		if got := idOfOrderKey(OrderKey(c.id)); got != c.id {
			t.Errorf("idOfOrderKey(OrderKey(%q)) = %q", c.id, got)
		}
	}
	// A run of 256 digits (the longest id) has a length of two bytes.
	long := string(bytes.Repeat([]byte("9"), api.MaxIDBytes))
	if k := NaturalKey(long); len(k) != 3+api.MaxIDBytes || k[1] != 1 || k[2] != 0 || idOfOrderKey(OrderKey(long)) != long {
		t.Fatalf("NaturalKey of 256 nines: % x…", k[:4])
	}
}

func TestCompareNatural(t *testing.T) {
	want := []string{"-5", "0", "00", "01", "1", "2", "007", "7", "9", "10", "100", "1000", "1001",
		"18446744073709551616", "99999999999999999999", "100000000000000000000",
		"A", "a", "a b", "a-1", "a02", "a2", "a2b", "a10", "ab", "b", "x1y9", "x1y10", "x2", "é", "é2", "é10"}
	got := slices.Clone(want)
	slices.Reverse(got)
	slices.SortFunc(got, CompareNatural)
	if !slices.Equal(got, want) {
		t.Fatalf("sorted %q, want %q", got, want)
	}
}

// naturalToken is a run of digits (num, the number without its leading
// zeros) or one other byte.
type naturalToken struct {
	num bool
	s   string
}

// naturalTokens splits an id as the natural order reads it.
func naturalTokens(id string) []naturalToken {
	var out []naturalToken
	for k := 0; k < len(id); {
		if !isDigit(id[k]) {
			out = append(out, naturalToken{s: id[k : k+1]})
			k++
			continue
		}
		end := k
		for end < len(id) && isDigit(id[end]) {
			end++
		}
		n := id[k:end]
		for len(n) > 0 && n[0] == '0' {
			n = n[1:]
		}
		out = append(out, naturalToken{num: true, s: n})
		k = end
	}
	return out
}

// referenceNatural is the natural order written directly: token by token,
// numbers by their length and then their digits, a number against a byte
// as the digit 0 would compare, then the ids' bytes.
func referenceNatural(a, b string) int {
	ta, tb := naturalTokens(a), naturalTokens(b)
	for k := 0; k < len(ta) && k < len(tb); k++ {
		x, y := ta[k], tb[k]
		var c int
		switch {
		case x.num && y.num:
			c = cmp.Or(cmp.Compare(len(x.s), len(y.s)), cmp.Compare(x.s, y.s))
		case x.num:
			c = cmp.Compare(byte('0'), y.s[0])
		case y.num:
			c = cmp.Compare(x.s[0], byte('0'))
		default:
			c = cmp.Compare(x.s, y.s)
		}
		if c != 0 {
			return c
		}
	}
	return cmp.Or(cmp.Compare(len(ta), len(tb)), cmp.Compare(a, b))
}

// FuzzOrderKey: OrderKey orders ids as the natural order written directly
// does, and gives its id back.
func FuzzOrderKey(f *testing.F) {
	for _, s := range [][2]string{{"a2", "a10"}, {"007", "7"}, {"-1", "0"}, {"a", "a0"}, {"x00", "x0"}, {"1a", "1"}, {"é", "9"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		for _, id := range []string{a, b} {
			if api.ValidateID(id) != "" {
				return
			}
		}
		for _, id := range []string{a, b} {
			if got := idOfOrderKey(OrderKey(id)); got != id {
				t.Fatalf("idOfOrderKey(OrderKey(%q)) = %q", id, got)
			}
		}
		got, want := bytes.Compare(OrderKey(a), OrderKey(b)), referenceNatural(a, b)
		if got != want || CompareNatural(a, b) != want {
			t.Fatalf("%q against %q: OrderKey %d, CompareNatural %d, want %d", a, b, got, CompareNatural(a, b), want)
		}
	})
}

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
				got = append(got, idOfOrderKey(k))
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
