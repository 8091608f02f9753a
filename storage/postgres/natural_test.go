package postgres_test

import (
	"bytes"
	"context"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/storage/postgres"
	"github.com/recsys-engine/recsys/storage/record"
	"github.com/recsys-engine/recsys/storage/storagetest"
)

// TestNaturalKey_sameAsGo: the server's recsys_natural_key, which orders
// the listings, gives record.NaturalKey's bytes for every id: hand-picked
// ones and random mixes of digits (leading zeros and runs up to the
// longest id), letters, punctuation and multi-byte characters.
func TestNaturalKey_sameAsGo(t *testing.T) {
	s := open(t, storagetest.Options{}).(*postgres.Store)
	ids := []string{"a", "0", "00", "007", "7", "a10b", "x1y22", "é9", "日本10", "-5", "a b", "%", "\\x30", "'",
		strings.Repeat("9", api.MaxIDBytes), strings.Repeat("0", api.MaxIDBytes), "1" + strings.Repeat("0", 255)}
	rnd := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"0", "00", "1", "9", "42", "007", "a", "Z", "-", " ", ".", "é", "日", "_", "😀", "%", "\\"}
	for range 2000 {
		var b strings.Builder
		for n := 1 + rnd.IntN(8); n > 0; n-- {
			b.WriteString(pieces[rnd.IntN(len(pieces))])
		}
		if api.ValidateID(b.String()) == "" {
			ids = append(ids, b.String())
		}
	}
	rows, err := s.Pool().Query(context.Background(), `SELECT id, recsys_natural_key(id) FROM unnest($1::text[]) WITH ORDINALITY AS q(id, n) ORDER BY n`, ids)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	k := 0
	for ; rows.Next(); k++ {
		var id string
		var key []byte
		if err := rows.Scan(&id, &key); err != nil {
			t.Fatal(err)
		}
		if want := record.NaturalKey(id); id != ids[k] || !bytes.Equal(key, want) {
			t.Fatalf("recsys_natural_key(%q) = %q, NaturalKey %q", id, key, want)
		}
	}
	if err := rows.Err(); err != nil || k != len(ids) {
		t.Fatalf("%d of %d keys: %v", k, len(ids), err)
	}
}

// TestListings_useNaturalIndex: the listing queries page over the
// (recsys_natural_key(id), id) indexes instead of sorting the table.
func TestListings_useNaturalIndex(t *testing.T) {
	s := open(t, storagetest.Options{}).(*postgres.Store)
	ctx := context.Background()
	for _, table := range []string{"users", "items"} {
		var plan strings.Builder
		tx, err := s.Pool().Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(ctx)
		// An empty table is read whole when allowed to: forbid that, as
		// a large one would.
		if _, err := tx.Exec(ctx, `SET LOCAL enable_seqscan = off`); err != nil {
			t.Fatal(err)
		}
		rows, err := tx.Query(ctx, `EXPLAIN SELECT id FROM `+table+`
			WHERE (recsys_natural_key(id), id) > (recsys_natural_key('a'), 'a'::text COLLATE "C")
			ORDER BY recsys_natural_key(id), id LIMIT 10`)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				t.Fatal(err)
			}
			plan.WriteString(line + "\n")
		}
		rows.Close()
		if !strings.Contains(plan.String(), table+"_natural") || strings.Contains(plan.String(), "Sort") {
			t.Fatalf("%s listing plan:\n%s", table, plan.String())
		}
	}
}
