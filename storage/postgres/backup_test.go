package postgres_test

import (
	"context"
	"net/url"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/recsys-engine/recsys/storage/dump"
	"github.com/recsys-engine/recsys/storage/postgres"
	"github.com/recsys-engine/recsys/storage/postgres/pgtest"
	"github.com/recsys-engine/recsys/storage/storagetest"
)

// TestPgDump_restore backs a filled store up the way the README says, with
// pg_dump -Fc while the store stays open, restores the file with
// pg_restore into a fresh database and opens the store there: the dump of
// every record (online data included) has the original's checksum, every
// read is the same, the next ids are the same, and the restored store takes
// writes.
func TestPgDump_restore(t *testing.T) {
	pgDump, pgRestore := pgtest.Tool(t, "pg_dump"), pgtest.Tool(t, "pg_restore")
	now := time.Date(2026, 3, 8, 9, 10, 11, 12, time.UTC)
	o := storagetest.Options{Now: func() time.Time { return now }}
	dsn := pgtest.Schema(t)
	src, err := postgres.Open(context.Background(), dsn, postgres.Options{Now: o.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	storagetest.Fill(t, src, 5)
	want := dumpSum(t, src)
	if want.Counts["impressions"] == 0 || want.Counts["experiments"] != 2 || want.Counts["models"] != 3 {
		t.Fatalf("the filled store holds %s", want)
	}

	// libpq takes no search_path in a URL: the schema goes to -n.
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	schema := u.Query().Get("search_path")
	q := u.Query()
	q.Del("search_path")
	u.RawQuery = q.Encode()
	file := filepath.Join(t.TempDir(), "recsys.dump")
	run(t, pgDump, "-Fc", "--dbname", u.String(), "--schema", schema, "--file", file)

	fresh := pgtest.Database(t, dsn)
	run(t, pgRestore, "--dbname", fresh, "--no-owner", "--single-transaction", "--exit-on-error", file)
	fu, err := url.Parse(fresh)
	if err != nil {
		t.Fatal(err)
	}
	fq := fu.Query()
	fq.Set("search_path", schema)
	fu.RawQuery = fq.Encode()
	restored, err := postgres.Open(context.Background(), fu.String(), postgres.Options{Now: o.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer restored.Close()
	if got := dumpSum(t, restored); got.Sum() != want.Sum() || got.String() != want.String() {
		t.Fatalf("restored %s (%s), dumped %s (%s)", got, got.Sum(), want, want.Sum())
	}
	storagetest.Compare(t, src, restored)
	storagetest.SameServices(t, src, restored)
	storagetest.MustAdd(t, restored, storagetest.Ev("after-restore", "i01", "view"))
}

func dumpSum(tb testing.TB, s dump.Dumper) *dump.Sum {
	tb.Helper()
	sum := dump.NewSum(nil)
	if err := s.Dump(context.Background(), sum); err != nil {
		tb.Fatal(err)
	}
	return sum
}

func run(tb testing.TB, prog string, args ...string) {
	tb.Helper()
	if out, err := exec.Command(prog, args...).CombinedOutput(); err != nil {
		tb.Fatalf("%s %v: %v\n%s", filepath.Base(prog), args, err, out)
	}
}
