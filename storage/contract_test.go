package storage_test

import (
	"testing"

	"github.com/recsys-engine/recsys/storage/storagetest"
)

// TestContract runs the storage contract (storage/storagetest), which
// storage/postgres runs too, against the bbolt store.
func TestContract(t *testing.T) { storagetest.Contract(t, storagetest.OpenBolt) }
