package postgres_test

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/storage/backend"
	"github.com/recsys-engine/recsys/storage/postgres"
	"github.com/recsys-engine/recsys/storage/postgres/pgtest"
	"github.com/recsys-engine/recsys/storage/storagetest"
)

// restoreFixture restores testdata/schema/NAME.sql, a dump of the schema
// an earlier version's code made running storagetest.SchemaFill
// (storage/testdata/schema/make.sh), into a fresh schema and returns its
// DSN.
func restoreFixture(tb testing.TB, name string) string {
	tb.Helper()
	dsn := pgtest.Schema(tb)
	u, err := url.Parse(dsn)
	if err != nil {
		tb.Fatal(err)
	}
	schema := u.Query().Get("search_path")
	sql, err := os.ReadFile(filepath.Join("testdata", "schema", name+".sql"))
	if err != nil {
		tb.Fatal(err)
	}
	conn := admin(tb, dsn)
	if _, err := conn.Exec(context.Background(), strings.ReplaceAll(string(sql), "__SCHEMA__", schema)); err != nil {
		tb.Fatalf("restoring %s: %v", name, err)
	}
	return dsn
}

// TestSchema_earlierVersionsMigrate opens a database of every earlier
// schema version, made by that version's code, with today's store: it is
// migrated to SchemaVersion and then holds exactly what today's code
// writes for the same workload (every read, the whole dump, models, jobs
// and reports, and the online data of a version that had it); online
// tables a migration added take data as today's do, and writes after the migration, a reopen too, leave both
// stores alike.
func TestSchema_earlierVersionsMigrate(t *testing.T) {
	ctx := context.Background()
	for _, fx := range []struct {
		name    string
		version int
		online  bool // holds storagetest.SchemaFillOnline's lists too
	}{
		{"v1", 1, false},
		{"v2", 2, false},
		{"v3", 3, true},
		{"v5", 5, true}, // the last before placements were counted
	} {
		t.Run(fx.name, func(t *testing.T) {
			dsn := restoreFixture(t, fx.name)
			if v, err := postgres.DatabaseSchema(ctx, dsn); err != nil || v != fx.version {
				t.Fatalf("the fixture holds schema %d (%v), want %d", v, err, fx.version)
			}
			st, err := postgres.Open(ctx, dsn, postgres.Options{Now: storagetest.SchemaFillNow})
			if err != nil {
				t.Fatalf("opening a schema %d database: %v", fx.version, err)
			}
			defer func() { st.Close() }()
			if v, err := st.StoredSchema(ctx); err != nil || v != postgres.SchemaVersion {
				t.Fatalf("schema after Open: %d (%v), want %d", v, err, postgres.SchemaVersion)
			}
			ref := open(t, storagetest.Options{Now: storagetest.SchemaFillNow})
			if err := storagetest.SchemaFill(ctx, ref); err != nil {
				t.Fatal(err)
			}
			if fx.online {
				if err := storagetest.SchemaFillOnline(ctx, ref); err != nil {
					t.Fatal(err)
				}
			}
			storagetest.CompareMigratedThenOnline(t, st, ref, fx.online)
			for _, s := range []backend.Store{st, ref} {
				storagetest.MustAdd(t, s, api.Interaction{UserID: "frank", ItemID: "m3", Type: "view", Timestamp: storagetest.SchemaFillNow()})
				if err := s.DeleteItem(ctx, "m1"); err != nil {
					t.Fatal(err)
				}
			}
			storagetest.Compare(t, st, ref)
			st.Close()
			if st, err = postgres.Open(ctx, dsn, postgres.Options{Now: storagetest.SchemaFillNow}); err != nil {
				t.Fatalf("reopening the migrated database: %v", err)
			}
			storagetest.Compare(t, st, ref)
		})
	}
}
