package datasettest

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// recorder is a testing.TB that records how Require stopped it. Like
// testing's own, its Skipf and Fatalf end the calling goroutine.
type recorder struct {
	testing.TB
	skipped, failed bool
	msg             string
}

func (r *recorder) Helper()      {}
func (r *recorder) Name() string { return "TestSomething" }

func (r *recorder) Skipf(format string, args ...any) {
	r.skipped, r.msg = true, fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.failed, r.msg = true, fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// require runs Require(path) on a recorder in its own goroutine.
func require(path string) *recorder {
	r := &recorder{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		Require(r, path)
	}()
	<-done
	return r
}

// TestRequire: a present path lets the test go on; a missing one fails it
// with the path, the folder the data sets belong in and the skip variable,
// or skips it when RECSYS_SKIP_REAL_DATA=1.
func TestRequire(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(SkipVar, "")
	if r := require(dir); r.failed || r.skipped {
		t.Fatalf("present %s: failed %v, skipped %v (%s)", dir, r.failed, r.skipped, r.msg)
	}
	missing := filepath.Join(dir, "ml-100k")
	r := require(missing)
	if !r.failed || r.skipped {
		t.Fatalf("missing %s without %s: failed %v, skipped %v, want a failure", missing, SkipVar, r.failed, r.skipped)
	}
	for _, want := range []string{"TestSomething", missing, "../shared/datasets", SkipVar + "=1"} {
		if !strings.Contains(r.msg, want) {
			t.Errorf("the failure %q does not say %q", r.msg, want)
		}
	}
	t.Setenv(SkipVar, "1")
	if r := require(missing); !r.skipped || r.failed {
		t.Fatalf("missing %s with %s=1: failed %v, skipped %v, want a skip", missing, SkipVar, r.failed, r.skipped)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Fatal("Require created the missing path")
	}
}
