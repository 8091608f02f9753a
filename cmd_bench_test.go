package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestReadIDs(t *testing.T) {
	name := filepath.Join(t.TempDir(), "events.csv")
	if err := os.WriteFile(name, []byte("user,item\nu2,i1\nu1,i3\nu2,i4\n\nu3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := readIDs(name, 0, "user")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"u2", "u1", "u3"}; !slices.Equal(got, want) {
		t.Errorf("users: got %v, want %v", got, want)
	}
	// The second field, or the first of a line with one; the header skipped.
	if got, err = readIDs(name, 1, "item"); err != nil {
		t.Fatal(err)
	}
	if want := []string{"i1", "i3", "i4", "u3"}; !slices.Equal(got, want) {
		t.Errorf("items: got %v, want %v", got, want)
	}
	if _, err := readIDs(name, 1, "nothing"); err != nil {
		t.Errorf("a file with ids: %v", err)
	}
	empty := filepath.Join(t.TempDir(), "empty.csv")
	if err := os.WriteFile(empty, []byte("item_id\n\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readIDs(empty, 1, "item"); err == nil || err.Error() != empty+" holds no item id" {
		t.Errorf("no ids: %v, want %q", err, empty+" holds no item id")
	}
}
