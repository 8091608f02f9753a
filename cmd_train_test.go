package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestTrain_everyModelSkipped: a `train` whose every model the memory
// guard skips says, for each, why, and exits 1 rather than reporting a
// training; with room, the same command trains.
func TestTrain_everyModelSkipped(t *testing.T) {
	dir := t.TempDir()
	csv := filepath.Join(dir, "events.csv")
	if err := os.WriteFile(csv, []byte("u1,i1\nu1,i2\nu2,i1\nu2,i3\nu3,i2\nu3,i3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "x.db")
	if code, stdout, stderr := runCmd(t, "import", "--db", db, "--format", "csv", csv); code != 0 {
		t.Fatalf("import: exit %d\n%s%s", code, stdout, stderr)
	}
	// 4 users and 4 items (dense index 0 included): popular's 4 counts of
	// 8 bytes are 32 bytes, over a budget of 16.
	code, stdout, stderr := runCmd(t, "train", "--db", db, "--models", "popular", "--train-memory", "16B")
	if code != 1 || !strings.Contains(stdout, "trained 0 of 1 models") ||
		!strings.Contains(stdout, "skipped popular: needs about 32 B at 4 users × 4 items (one count per item); the memory budget is 16 B (--train-memory)") ||
		!strings.Contains(stderr, "fitted no model: every one was skipped") {
		t.Fatalf("train under 16 bytes: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if code, stdout, stderr := runCmd(t, "train", "--db", db, "--models", "popular", "--train-memory", "1KiB"); code != 0 || !strings.Contains(stdout, "trained 1 of 1 models") {
		t.Fatalf("train under 1 KiB: exit %d\n%s%s", code, stdout, stderr)
	}
}

// Nine tenths of the machine's memory become the runtime's soft limit,
// or a lower training budget, less the mapped database but keeping half,
// unless GOMEMLIMIT sets one; an unknown machine size sets nothing.
func TestLimitMemory(t *testing.T) {
	defer func(f func(int64) int64) { setMemoryLimit = f }(setMemoryLimit)
	var got []int64
	setMemoryLimit = func(n int64) int64 { got = append(got, n); return 0 }
	t.Setenv("GOMEMLIMIT", "")
	limitMemory(20<<30, 0, 0)
	limitMemory(20<<30, 10<<30, 0)     // the budget is lower
	limitMemory(20<<30, 19<<30, 0)     // nine tenths are lower
	limitMemory(20<<30, 10<<30, 3<<30) // a 3 GiB file is mapped
	limitMemory(20<<30, 10<<30, 8<<30) // half the budget is kept
	limitMemory(0, 10<<30, 0)
	t.Setenv("GOMEMLIMIT", "8GiB")
	limitMemory(20<<30, 10<<30, 0)
	if want := []int64{18 << 30, 10 << 30, 18 << 30, 7 << 30, 5 << 30}; !slices.Equal(got, want) {
		t.Fatalf("limits set: %v, want %v", got, want)
	}
	db := filepath.Join(t.TempDir(), "x.db")
	if err := os.WriteFile(db, make([]byte, 4096), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := []int64{mappedSize(db), mappedSize(db + ".none"), mappedSize("postgres://h/db")}; !slices.Equal(got, []int64{4096, 0, 0}) {
		t.Fatalf("mapped sizes %v, want [4096 0 0]", got)
	}
}
