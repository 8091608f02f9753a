package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/storage"
	"github.com/recsys-engine/recsys/storage/postgres/pgtest"
)

// testContractBackup: GET /admin/backup on a bbolt server answers the
// database file as application/octet-stream with its exact
// Content-Length, a copy that opens as a store holding what the server
// holds; on a PostgreSQL server it is 501 not_implemented, naming pg_dump.
func testContractBackup(t *testing.T) {
	s := startContractServer(t, nil)
	s.do(t, contractCase{method: "POST", path: "/interactions", body: contractEvents(20, 12, 4), want: 201})
	a := s.do(t, contractCase{name: "backup", method: "GET", path: "/admin/backup", want: 200})
	if n, err := strconv.Atoi(a.header.Get("Content-Length")); err != nil || n != len(a.body) || n == 0 {
		t.Fatalf("Content-Length %q for a body of %d bytes", a.header.Get("Content-Length"), len(a.body))
	}
	if ct, cd := a.header.Get("Content-Type"), a.header.Get("Content-Disposition"); ct != "application/octet-stream" ||
		cd != `attachment; filename="recsys-backup.db"` {
		t.Errorf("Content-Type %q, Content-Disposition %q", ct, cd)
	}
	path := filepath.Join(t.TempDir(), "copy.db")
	if _, err := storage.ReceiveBackup(bytes.NewReader(a.body), int64(len(a.body)), path, false); err != nil {
		t.Fatal(err)
	}
	copied, err := storage.Open(path, storage.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer copied.Close()
	got, want := mustStoreCounts(t, copied), mustStoreCounts(t, s.app.store)
	if got != want || want.Events != 80 || want.Users != 20 {
		t.Errorf("the copy counts %+v, the server %+v (want 80 events of 20 users)", got, want)
	}

	pg := startContractServer(t, func(c *Config) { c.DB = pgtest.Schema(t) })
	var out api.ErrorOut
	pg.do(t, contractCase{name: "backup on PostgreSQL", method: "GET", path: "/admin/backup", want: 501}).decode(t, &out)
	if out.Error.Code != api.CodeNotImplemented || !strings.Contains(out.Error.Message, "pg_dump -Fc") || !strings.Contains(out.Error.Message, "pg_restore") {
		t.Errorf("PostgreSQL: %+v, want not_implemented naming pg_dump -Fc and pg_restore", out.Error)
	}
}

func mustStoreCounts(tb testing.TB, s interface {
	Counts(context.Context) (api.Counts, error)
}) api.Counts {
	tb.Helper()
	c, err := s.Counts(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	return c
}
