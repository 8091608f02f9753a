// Package storagetest gives the tests of other packages a real store.
package storagetest

import (
	"path/filepath"
	"testing"

	"github.com/recsys-engine/recsys/storage"
	"github.com/recsys-engine/recsys/storage/backend"
)

// Open opens a store in a temporary directory of tb, closed when the test
// ends.
func Open(tb testing.TB) *storage.Store {
	tb.Helper()
	st, err := storage.Open(filepath.Join(tb.TempDir(), "e.db"), storage.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	return st
}

// OpenBolt is the Opener of the bbolt store.
func OpenBolt(tb testing.TB, o Options) backend.Store {
	tb.Helper()
	st, err := storage.Open(filepath.Join(tb.TempDir(), "c.db"), storage.Options{Policy: o.Policy, Now: o.Now})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	return st
}
