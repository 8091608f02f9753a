package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"recsys/storage"
	"recsys/storage/bolttest"
	"recsys/storage/postgres/pgtest"
	"recsys/storage/storagetest"
)

// TestMigrate_command runs `recsys migrate` from a bbolt file into
// PostgreSQL and from there into a new file: each run prints the counts
// and the verified checksum, the same both ways, and the final file
// answers every read as the first and holds the same bytes in every
// bucket. Into a database that holds data, from a
// missing file, or to the same database it refuses, changing nothing.
func TestMigrate_command(t *testing.T) {
	dir := t.TempDir()
	first, back := filepath.Join(dir, "first.db"), filepath.Join(dir, "back.db")
	filledFile(t, first)
	dsn := pgtest.Schema(t)

	migrateOK := func(from, to string) string {
		t.Helper()
		var out, errOut bytes.Buffer
		if code := runMain(context.Background(), []string{"migrate", "--from", from, "--to", to}, &out, &errOut); code != 0 {
			t.Fatalf("migrate %s → %s: exit %d: %s", from, to, code, errOut.String())
		}
		s := out.String()
		if !strings.Contains(s, "verified") || !strings.Contains(s, "16 users") {
			t.Fatalf("migrate printed %q", s)
		}
		return s[strings.Index(s, "sha256 "):]
	}
	there := migrateOK(first, dsn)
	again := migrateOK(dsn, back)
	if there != again {
		t.Fatalf("checksums differ: %s / %s", there, again)
	}
	a, err := storage.Open(first, storage.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := storage.Open(back, storage.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	storagetest.Compare(t, a, b)
	// Through PostgreSQL and back, the file holds what it held, to the
	// byte, but for the meta keys naming each file's own event log.
	if diff := bolttest.Diff(bolttest.File(t, first).Without("meta", "log/"), bolttest.File(t, back).Without("meta", "log/"), nil); diff != nil {
		t.Fatalf("the file back from PostgreSQL differs: %v", diff)
	}

	for _, c := range []struct {
		name     string
		args     []string
		want     string
		noTarget string // a file that must not appear
	}{
		{"into data", []string{"--from", first, "--to", dsn}, "already holds data", ""},
		{"missing source", []string{"--from", filepath.Join(dir, "none.db"), "--to", filepath.Join(dir, "new.db")}, "no database at", filepath.Join(dir, "new.db")},
		{"same database", []string{"--from", first, "--to", first}, "same database", ""},
		{"no target", []string{"--from", first}, "needs --from DB and --to DB", ""},
	} {
		var out, errOut bytes.Buffer
		if code := runMain(context.Background(), append([]string{"migrate"}, c.args...), &out, &errOut); code != 1 || !strings.Contains(errOut.String(), c.want) {
			t.Errorf("%s: exit %d, stderr %q; want 1 and %q", c.name, code, errOut.String(), c.want)
		}
		if c.noTarget != "" {
			if _, err := os.Stat(c.noTarget); err == nil {
				t.Errorf("%s: left %s behind", c.name, c.noTarget)
			}
		}
	}
}

// filledFile writes storagetest.Fill's records (seed 4) into a new bbolt
// file at path, at a fixed time.
func filledFile(tb testing.TB, path string) {
	tb.Helper()
	now := time.Date(2026, 3, 8, 9, 10, 11, 12, time.UTC)
	st, err := storage.Open(path, storage.Options{Now: func() time.Time { return now }})
	if err != nil {
		tb.Fatal(err)
	}
	storagetest.Fill(tb, st, 4)
	if err := st.Close(); err != nil {
		tb.Fatal(err)
	}
}
