package storage_test

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/storage"
	"github.com/recsys-engine/recsys/storage/backend"
	"github.com/recsys-engine/recsys/storage/storagetest"
)

// schemaFixtures are the files of testdata/schema: storagetest.SchemaFill
// run by the code of each earlier schema version (make.sh there).
var schemaFixtures = []struct {
	name    string
	version int
	online  bool // holds storagetest.SchemaFillOnline's lists too
}{
	{"v1-json", 1, false}, // item records all JSON, no per-day counters
	{"v1", 1, false},      // item records with the binary index, per-day counters
	{"v2", 2, false},
	{"v3", 3, false},
	{"v4", 4, false},
	{"v4-online", 4, true},
	{"v5", 5, true},
	{"v6", 6, true}, // lists without a placement
}

// copyFixture copies a fixture, with its event log when it has one, to
// dir as x.db and returns the path.
func copyFixture(tb testing.TB, name, dir string) string {
	tb.Helper()
	src := filepath.Join("testdata", "schema", name+".bolt")
	dst := filepath.Join(dir, "x.db")
	err := filepath.WalkDir(src+".events", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		to := dst + ".events" + strings.TrimPrefix(path, src+".events")
		if d.IsDir() {
			return os.MkdirAll(to, 0o700)
		}
		return copyFile(path, to)
	})
	if err != nil && !os.IsNotExist(err) {
		tb.Fatal(err)
	}
	if err := copyFile(src, dst); err != nil {
		tb.Fatal(err)
	}
	return dst
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o600)
}

// schemaReference is today's store filled with the fixtures' workload.
func schemaReference(tb testing.TB, online bool) backend.Store {
	tb.Helper()
	ref := storagetest.OpenBolt(tb, storagetest.Options{Now: storagetest.SchemaFillNow})
	if err := storagetest.SchemaFill(tb.Context(), ref); err != nil {
		tb.Fatal(err)
	}
	if online {
		if err := storagetest.SchemaFillOnline(tb.Context(), ref); err != nil {
			tb.Fatal(err)
		}
	}
	return ref
}

// TestSchema_earlierVersionsMigrate opens a file of every earlier schema
// version, made by that version's code, with today's store: it is migrated
// to SchemaVersion and then holds exactly what today's code writes for the
// same workload (every read, the whole dump, models, jobs, reports and the
// online data); writes after the migration, a delete of an item among them,
// leave both stores alike, and so does a reopen.
func TestSchema_earlierVersionsMigrate(t *testing.T) {
	ctx := t.Context()
	for _, fx := range schemaFixtures {
		t.Run(fx.name, func(t *testing.T) {
			path := copyFixture(t, fx.name, t.TempDir())
			if v, err := storage.FileSchema(path); err != nil || v != fx.version {
				t.Fatalf("the fixture holds schema %d (%v), want %d", v, err, fx.version)
			}
			st, err := storage.Open(path, storage.Options{Now: storagetest.SchemaFillNow})
			if err != nil {
				t.Fatalf("opening a schema %d file: %v", fx.version, err)
			}
			defer func() { st.Close() }()
			if v, err := st.StoredSchema(ctx); err != nil || v != storage.SchemaVersion {
				t.Fatalf("schema after a writable open: %d (%v), want %d", v, err, storage.SchemaVersion)
			}
			ref := schemaReference(t, fx.online)
			storagetest.CompareMigratedThenOnline(t, st, ref, fx.online)

			for _, s := range []backend.Store{st, ref} {
				storagetest.MustAdd(t, s, api.Interaction{UserID: "frank", ItemID: "m3", Type: "view", Timestamp: storagetest.SchemaFillNow()},
					api.Interaction{UserID: "alice", ItemID: "m3", Type: "purchase", Timestamp: storagetest.SchemaFillNow()})
				if err := s.DeleteItem(ctx, "m1"); err != nil {
					t.Fatal(err)
				}
			}
			storagetest.Compare(t, st, ref)
			if c := storagetest.MustCounts(t, st); c.Items != 3 || c.Users != 5 || c.Events != 7 {
				t.Fatalf("after two events and deleting m1 (five of its events): %+v", c)
			}
			if err := st.Close(); err != nil {
				t.Fatal(err)
			}
			if st, err = storage.Open(path, storage.Options{Now: storagetest.SchemaFillNow}); err != nil {
				t.Fatalf("reopening the migrated file: %v", err)
			}
			storagetest.Compare(t, st, ref)
		})
	}
}

// TestSchema_readOnlyEarlierVersions: opened read-only, a file of version
// 2 to 6 is read as it is (its online counters as lists without a
// placement) and left unchanged; a version 1 file, whose item
// records only a writable open rewrites, is refused with a message saying
// so, and is left unchanged too.
func TestSchema_readOnlyEarlierVersions(t *testing.T) {
	for _, fx := range schemaFixtures {
		t.Run(fx.name, func(t *testing.T) {
			path := copyFixture(t, fx.name, t.TempDir())
			before := fileSum(t, path)
			st, err := storage.Open(path, storage.Options{ReadOnly: true})
			if fx.version == 1 {
				want := fmt.Sprintf("database schema version 1 is older than this binary's %d and is migrated only by a writable open", storage.SchemaVersion)
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Fatalf("read-only open of a version 1 file: %v, want %q", err, want)
				}
			} else {
				if err != nil {
					t.Fatalf("read-only open of a version %d file: %v", fx.version, err)
				}
				if c := storagetest.MustCounts(t, st); c != storagetest.SchemaFillCounts {
					t.Errorf("counts read-only: %+v, want %+v", c, storagetest.SchemaFillCounts)
				}
				if v, err := st.StoredSchema(t.Context()); err != nil || v != fx.version {
					t.Errorf("StoredSchema read-only: %d (%v), want %d", v, err, fx.version)
				}
				if fx.online {
					// By hand: SchemaFillOnline's two lists, of two items
					// each, one clicked on alice's; no placement.
					want := []api.OnlineCount{
						{Day: "2026-11-07", Model: "itemknn", Experiment: "x000001", Arm: "b", Lists: 1, Impressions: 2},
						{Day: "2026-11-07", Model: "popular", Lists: 1, Impressions: 2, Clicks: 1},
					}
					if c, err := st.OnlineCounts(t.Context(), "2026-11-01", "2026-11-30"); err != nil || !reflect.DeepEqual(c, want) {
						t.Errorf("online counts read-only: %+v (%v), want %+v", c, err, want)
					}
				}
				st.Close()
			}
			if fileSum(t, path) != before {
				t.Error("the read-only open changed the file")
			}
		})
	}
}

func fileSum(tb testing.TB, path string) [32]byte {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return sha256.Sum256(b)
}

// TestSchema_newerRefused: a file whose schema is newer than this binary's
// is refused, writable or read-only, with a message naming both versions,
// and is left byte for byte as it was.
func TestSchema_newerRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "new.db")
	st, err := storage.Open(path, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	storagetest.MustAdd(t, st, api.Interaction{UserID: "u", ItemID: "i", Type: "view"})
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	next := storage.SchemaVersion + 1
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte("meta")).Put([]byte("schema"), []byte{0, 0, 0, 0, 0, 0, 0, byte(next)})
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	before := fileSum(t, path)
	want := fmt.Sprintf("database schema version %d is newer than this binary's %d; run a newer recsys", next, storage.SchemaVersion)
	for _, ro := range []bool{false, true} {
		if _, err := storage.Open(path, storage.Options{ReadOnly: ro}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Open (read-only %v) of a schema %d file: %v, want %q", ro, next, err, want)
		}
	}
	if v, err := storage.FileSchema(path); err != nil || v != next {
		t.Errorf("FileSchema = %d, %v; want %d", v, err, next)
	}
	if fileSum(t, path) != before {
		t.Error("the refused opens changed the file")
	}
}
