package storage

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/storage/dump"
)

// TestStore_readOnlyUnappliedTail: a file whose server crashed before
// applying its last events, opened read-only (as migrate opens its
// source), refuses a dump and a backup, naming the events and what to do,
// instead of copying the file without them; once a writable open has
// applied them, the dump holds them.
func TestStore_readOnlyUnappliedTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "crashed.db")
	st := openLogStore(t, path)
	mustAdd(t, st, ev("u1", "i1", "view"), ev("u1", "i2", "view"))
	if err := st.applyTail(); err != nil {
		t.Fatal(err)
	}
	mustAdd(t, st, ev("u2", "i1", "view"), ev("u3", "i3", "view"), ev("u3", "i1", "view"))
	crash(t, st)

	ro, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	for name, err := range map[string]error{
		"dump": ro.Dump(context.Background(), dump.NewSum(nil)),
		"backup": func() error {
			_, err := ro.Backup(context.Background(), func(int64) (io.Writer, error) { return io.Discard, nil })
			return err
		}(),
	} {
		if err == nil || !strings.Contains(err.Error(), "holds 3 acknowledged events not yet applied") || !strings.Contains(err.Error(), "start and stop a server on it once") {
			t.Errorf("%s of a read-only file with an unapplied tail: err = %v", name, err)
		}
	}
	ro.Close()

	if err := mustOpen(t, path).Close(); err != nil { // applies the tail
		t.Fatal(err)
	}
	ro, err = Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	sum := dump.NewSum(nil)
	if err := ro.Dump(context.Background(), sum); err != nil {
		t.Fatal(err)
	}
	if sum.Counts["users"] != 3 || sum.Counts["pairs"] != 5 {
		t.Errorf("the dump after the tail was applied: %s, want 3 users and 5 pairs", sum)
	}
}

// TestReceiveBackup_givesOwnLog: a received copy names a log of its own
// (a new id, nothing applied), so that it opens with no event log beside
// it and takes events.
func TestReceiveBackup_givesOwnLog(t *testing.T) {
	dir := t.TempDir()
	src := mustOpen(t, filepath.Join(dir, "src.db"))
	mustAdd(t, src, ev("u1", "i1", "view"))
	var buf bytes.Buffer
	if _, err := src.Backup(context.Background(), func(int64) (io.Writer, error) { return &buf, nil }); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "copy.db")
	info, err := ReceiveBackup(bytes.NewReader(buf.Bytes()), int64(buf.Len()), path, false)
	if err != nil {
		t.Fatal(err)
	}
	if info.Bytes != int64(buf.Len()) || info.Schema != SchemaVersion || info.Counts != (api.Counts{Users: 1, Items: 1, Interactions: 1, Positives: 1, Events: 1}) {
		t.Errorf("info %+v", info)
	}
	cp := mustOpen(t, path)
	if bytes.Equal(logID(t, cp), logID(t, src)) {
		t.Error("the copy names the original's event log")
	}
	mustAdd(t, cp, ev("u2", "i1", "view"))
	if c := mustCounts(t, cp); c.Users != 2 || c.Events != 2 {
		t.Errorf("the copy after an event: %+v", c)
	}
}
