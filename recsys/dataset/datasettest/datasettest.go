// Package datasettest guards the tests that read the shared data sets,
// which live in ../shared/datasets beside the repository (README, Quick
// start): a missing data set fails such a test with where to put it, so
// that it never passes unnoticed, unless RECSYS_SKIP_REAL_DATA=1 asks to
// skip it.
package datasettest

import (
	"os"
	"path/filepath"
	"testing"
)

// SkipVar is the environment variable that, set to 1, skips the tests whose
// data set is missing instead of failing them.
const SkipVar = "RECSYS_SKIP_REAL_DATA"

// Require stops tb when path, a data set folder or file under
// ../shared/datasets, does not exist: it skips tb when RECSYS_SKIP_REAL_DATA
// is 1 and fails it with where the data set must be otherwise.
func Require(tb testing.TB, path string) {
	tb.Helper()
	if _, err := os.Stat(path); err == nil {
		return
	}
	if os.Getenv(SkipVar) == "1" {
		tb.Skipf("no data set at %s and %s=1", path, SkipVar)
	}
	where := path
	if abs, err := filepath.Abs(path); err == nil {
		where = abs
	}
	tb.Fatalf("%s reads %s, which is missing: the shared data sets must be in ../shared/datasets beside the repository; put them there, or set %s=1 to skip this test",
		tb.Name(), where, SkipVar)
}
