package postgres_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/recsys-engine/recsys/storage/backend"
	"github.com/recsys-engine/recsys/storage/postgres"
	"github.com/recsys-engine/recsys/storage/postgres/pgtest"
	"github.com/recsys-engine/recsys/storage/storagetest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// open opens a store on a fresh schema of the test server.
func open(tb testing.TB, o storagetest.Options) backend.Store {
	tb.Helper()
	s, err := postgres.Open(context.Background(), pgtest.Schema(tb), postgres.Options{Policy: o.Policy, Now: o.Now})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

// TestContract runs the storage contract (storage/storagetest), which the
// bbolt store runs too, against the PostgreSQL store.
func TestContract(t *testing.T) { storagetest.Contract(t, open) }

// TestSameAnswersAsBolt runs one workload (every event type, values,
// timestamps over a week, repeats out of order, catalogue writes, deletes
// of pairs, users and items) on both stores and compares every read.
func TestSameAnswersAsBolt(t *testing.T) {
	now := time.Date(2026, 3, 8, 9, 10, 11, 12, time.UTC)
	o := storagetest.Options{Now: func() time.Time { return now }}
	for seed := 1; seed <= 3; seed++ {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			t.Parallel()
			pg, bolt := open(t, o), storagetest.OpenBolt(t, o)
			storagetest.Workload(t, pg, seed)
			storagetest.Workload(t, bolt, seed)
			storagetest.Compare(t, bolt, pg)
		})
	}
}

// TestMigrate_boltToPostgresAndBack copies a bbolt store into PostgreSQL
// and that into a new bbolt file, as `recsys migrate` does: each copy has
// the checksum of its source and answers every read as the original.
func TestMigrate_boltToPostgresAndBack(t *testing.T) {
	now := time.Date(2026, 3, 8, 9, 10, 11, 12, time.UTC)
	o := storagetest.Options{Now: func() time.Time { return now }}
	bolt, pg, back := storagetest.OpenBolt(t, o), open(t, o), storagetest.OpenBolt(t, o)
	storagetest.Fill(t, bolt, 3)
	there := storagetest.Migrate(t, bolt, pg)
	again := storagetest.Migrate(t, pg, back)
	if there != again {
		t.Fatalf("checksums %s there, %s back", there, again)
	}
	storagetest.Compare(t, bolt, pg)
	storagetest.Compare(t, bolt, back)
	storagetest.SameServices(t, bolt, pg, back)
}

// TestOpen_durableCommits: connections commit synchronously even on a
// server configured with synchronous_commit off, and a URL asking for off
// is refused.
func TestOpen_durableCommits(t *testing.T) {
	dsn := pgtest.Schema(t)
	s, err := postgres.Open(context.Background(), dsn+"&options=-csynchronous_commit%3Doff", postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var got string
	if err := s.Pool().QueryRow(context.Background(), "SHOW synchronous_commit").Scan(&got); err != nil || got != "on" {
		t.Fatalf("synchronous_commit = %q, %v; want on", got, err)
	}
	if _, err := postgres.Open(context.Background(), dsn+"&synchronous_commit=off", postgres.Options{}); err == nil ||
		!strings.Contains(err.Error(), "synchronous_commit=off") {
		t.Fatalf("a URL asking for synchronous_commit=off: err = %v", err)
	}
}
