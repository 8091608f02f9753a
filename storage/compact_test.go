package storage

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/storage/bolttest"
)

// TestCompact: a file whose records were deleted shrinks, every bucket,
// key, value and sequence is as it was, the store opens on it and goes
// on (a new user's index follows the old ones, an event not yet applied
// is still there); a file a store holds open is refused and left alone.
func TestCompact(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "c.db")
	s := openTestStore(t, path, Options{})
	var evs []api.Interaction
	for u := range 200 {
		for i := range 20 {
			evs = append(evs, api.Interaction{UserID: fmt.Sprintf("u%d", u), ItemID: fmt.Sprintf("i%d", (u*7+i)%300), Type: "view"})
		}
	}
	if _, err := s.AddInteractions(ctx, evs); err != nil {
		t.Fatal(err)
	}
	at := time.Now().Add(-48 * time.Hour)
	var imps []api.Impression
	for k := range 20_000 {
		at = at.Add(time.Millisecond)
		imps = append(imps, api.Impression{ID: api.NewRecommendationID(at, "c", uint64(k)), UserID: "u1", Model: "itemknn",
			Items: []string{"i1", "i2", "i3", "i4", "i5", "i6", "i7", "i8", "i9", "i10"}, At: at})
	}
	if err := s.PutImpressions(ctx, imps); err != nil {
		t.Fatal(err)
	}
	for {
		if n, err := s.PruneImpressions(ctx, at.Add(-time.Second), 5_000); err != nil || n == 0 {
			if err != nil {
				t.Fatal(err)
			}
			break
		}
	}

	// Refused while the store has the file open.
	if _, _, err := Compact(path, 50*time.Millisecond); err == nil || !strings.Contains(err.Error(), "locked") {
		t.Fatalf("Compact on an open store: %v, want a refusal naming the lock", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	want := bolttest.File(t, path)
	before, after, err := Compact(path, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); after != fi.Size() || after >= before {
		t.Fatalf("sizes %d → %d (file %d): want the file smaller", before, after, fi.Size())
	}
	if diff := bolttest.Diff(bolttest.File(t, path), want, nil); diff != nil {
		t.Fatalf("the compacted file's records differ: %v", diff)
	}
	if left, _ := filepath.Glob(path + compactTempInfix + "*"); len(left) != 0 {
		t.Fatalf("temporary files left: %v", left)
	}

	s = openTestStore(t, path, Options{noApplier: true}) // the next event stays in the log's tail
	if _, err := s.AddInteractions(ctx, []api.Interaction{{UserID: "fresh", ItemID: "i1", Type: "view"}}); err != nil {
		t.Fatal(err)
	}
	if c, err := s.Counts(ctx); err != nil || c.Users != 201 || c.Interactions != 200*20+1 {
		t.Fatalf("counts after compaction and one event: %+v, %v", c, err)
	}
	if p, err := s.Profile(ctx, "fresh"); err != nil || !p.Known || len(p.Positive) != 1 {
		t.Fatalf("a new user after compaction: %+v, %v", p, err)
	}
	if err := s.Close(); err != nil { // applies the tail
		t.Fatal(err)
	}
	// The users' sequence went on: the new user's index follows the others.
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var fresh, top uint64
	err = db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketUserIDs).ForEach(func(k, v []byte) error {
			if string(v) == "fresh" {
				fresh = getU64(k)
			} else {
				top = max(top, getU64(k))
			}
			return nil
		})
	})
	if err != nil || fresh != top+1 {
		t.Fatalf("the new user's index %d after the others' %d (%v): want the next one", fresh, top, err)
	}
}
