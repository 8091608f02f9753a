package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/recsys-engine/recsys/storage"
	"github.com/recsys-engine/recsys/storage/storagetest"
)

// TestCompact_command: `recsys compact` rewrites a filled file and prints
// its sizes, and the file then answers every read as before; it refuses a
// missing --db, a PostgreSQL DSN, a missing file and a file a store holds
// open, leaving that file as it was.
func TestCompact_command(t *testing.T) {
	dir := t.TempDir()
	path, copyPath := filepath.Join(dir, "c.db"), filepath.Join(dir, "copy.db")
	filledFile(t, path)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(copyPath, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(copyPath+".events", os.DirFS(path+".events")); err != nil {
		t.Fatal(err)
	}
	compact := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := runMain(context.Background(), append([]string{"compact"}, args...), &out, &errOut)
		return code, out.String(), errOut.String()
	}
	if code, out, errOut := compact("--db", path); code != 0 || !strings.Contains(out, "compacted "+path+": ") || !strings.Contains(out, "MiB →") {
		t.Fatalf("compact: exit %d, out %q, err %q", code, out, errOut)
	}
	a, err := storage.Open(path, storage.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	b, err := storage.Open(copyPath, storage.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	storagetest.Compare(t, a, b)
	a.Close()
	b.Close()

	held, err := storage.Open(copyPath, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	before, _ := os.ReadFile(copyPath)
	for _, bad := range []struct {
		args []string
		says string
	}{
		{nil, "compact needs --db FILE"},
		{[]string{"--db", "postgres://u@127.0.0.1:5432/db"}, "PostgreSQL reclaims space itself"},
		{[]string{"--db", filepath.Join(dir, "none.db")}, "no such file"},
		{[]string{"--db", copyPath}, "locked by another process"},
	} {
		if code, _, errOut := compact(bad.args...); code == 0 || !strings.Contains(errOut, bad.says) {
			t.Errorf("compact %v: exit %d, %q; want a refusal saying %q", bad.args, code, errOut, bad.says)
		}
	}
	if after, _ := os.ReadFile(copyPath); !bytes.Equal(before, after) {
		t.Error("the refused compaction changed the file a store holds")
	}
}
