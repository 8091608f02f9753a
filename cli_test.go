package main

import (
	"io"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/recsys-engine/recsys/storage"
)

// TestServe_demoBusyPort: serve --demo on a port another process holds
// fails naming --addr and writes no demo data (it used to fill the
// database and only then find the port busy).
func TestServe_demoBusyPort(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	db := filepath.Join(t.TempDir(), "demo.db")
	var stderr strings.Builder
	code := runMain(t.Context(), []string{"serve", "--demo", "--addr", ln.Addr().String(), "--db", db}, io.Discard, &stderr)
	last := lastLine(stderr.String())
	if code != 1 || !strings.HasPrefix(last, "recsys: --addr: ") || !strings.Contains(last, "address already in use") {
		t.Fatalf("serve --demo on a busy port: exit %d, last line %q; want 1 and an --addr error", code, last)
	}
	st, err := storage.Open(db, storage.Options{Timeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	c, err := st.Counts(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if c.Items != 0 || c.Users != 0 || c.Events != 0 {
		t.Errorf("the failed start wrote %d items, %d users, %d events; want none", c.Items, c.Users, c.Events)
	}
}

// TestCLI_dbFlagHelp: every command whose --db opens a store says in its
// help that the flag takes a PostgreSQL URL as well as a bbolt file (train
// said "bbolt database file").
func TestCLI_dbFlagHelp(t *testing.T) {
	for _, cmd := range []string{"serve", "import", "train", "version"} {
		var stderr strings.Builder
		if code := runMain(t.Context(), []string{cmd, "--help"}, io.Discard, &stderr); code != 0 {
			t.Fatalf("%s --help: exit %d", cmd, code)
		}
		help := stderr.String()
		at := strings.Index(help, "  -db ")
		if at < 0 {
			t.Fatalf("%s --help has no -db flag:\n%s", cmd, help)
		}
		line := help[at:]
		if end := strings.Index(line, "\n  -"); end >= 0 {
			line = line[:end]
		}
		if !strings.Contains(line, "bbolt") || !strings.Contains(line, "postgres://") {
			t.Errorf("%s --help: the -db flag says %q; want it to name a bbolt file and postgres://", cmd, line)
		}
	}
}

// TestGitignore_databaseFiles: a database file and its event log folder
// (<db>.events/, beside the file) are ignored by git.
func TestGitignore_databaseFiles(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Fatal("git is needed to check .gitignore: ", err)
	}
	for _, path := range []string{"recsys.db", "demo.db.events/00000000000000000000.log", "data/x.db.events/"} {
		out, err := exec.Command(git, "check-ignore", "--no-index", "-v", path).CombinedOutput()
		if err != nil {
			t.Errorf("git check-ignore %s: %v %s; want the path ignored", path, err, out)
		}
	}
}
