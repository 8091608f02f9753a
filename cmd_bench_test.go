package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestReadUserIDs(t *testing.T) {
	name := filepath.Join(t.TempDir(), "events.csv")
	if err := os.WriteFile(name, []byte("user,item\nu2,i1\nu1,i3\nu2,i4\n\nu3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := readUserIDs(name)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"u2", "u1", "u3"}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}
