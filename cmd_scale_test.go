package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/storage"
)

// TestGenerateScaleCSV_shape: the generator writes exactly the requested
// number of distinct (user, item) lines, the same file for the same seed,
// and skewed popularity: the most popular item has many times the mean
// count, and so has the most active user.
func TestGenerateScaleCSV_shape(t *testing.T) {
	dir := t.TempDir()
	c := scaleConfig{Interactions: 20000, PerUser: 20, Items: 1000, ItemExponent: 1, UserExponent: 2, Seed: 3}
	a, b := filepath.Join(dir, "a.csv"), filepath.Join(dir, "b.csv")
	users, err := generateScaleCSV(a, c)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := generateScaleCSV(b, c); err != nil {
		t.Fatal(err)
	}
	ba, _ := os.ReadFile(a)
	bb, _ := os.ReadFile(b)
	if string(ba) != string(bb) {
		t.Error("the same seed wrote different files")
	}
	f, err := os.Open(a)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pairs := map[string]bool{}
	perItem, perUser := map[string]int{}, map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Split(sc.Text(), ",")
		if len(fs) != 4 || fs[2] != "" {
			t.Fatalf("line %q: want user,item,,timestamp", sc.Text())
		}
		if pairs[fs[0]+","+fs[1]] {
			t.Fatalf("pair %s,%s written twice", fs[0], fs[1])
		}
		pairs[fs[0]+","+fs[1]] = true
		perItem[fs[1]]++
		perUser[fs[0]]++
	}
	if len(pairs) != c.Interactions || len(perUser) != users {
		t.Fatalf("%d pairs of %d users, want %d pairs of %d users", len(pairs), len(perUser), c.Interactions, users)
	}
	top := func(m map[string]int) (maxN int, mean float64) {
		var ns []int
		for _, n := range m {
			ns = append(ns, n)
		}
		return slices.Max(ns), float64(c.Interactions) / float64(len(ns))
	}
	if m, mean := top(perItem); float64(m) < 10*mean {
		t.Errorf("most popular item has %d interactions, mean %.1f: not a power law", m, mean)
	}
	if m, mean := top(perUser); float64(m) < 5*mean {
		t.Errorf("most active user has %d interactions, mean %.1f: not a power law", m, mean)
	}
}

// TestLastGeneratedUser: --serve-only counts the users from the last line
// of the generated events.csv, and refuses a file that is not one.
func TestLastGeneratedUser(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "events.csv")
	if err := os.WriteFile(good, []byte("u1,i5,,1735689600\nu2,i9,,1735689601\nu42,i3,,1735689602\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if n, err := lastGeneratedUser(good); n != 42 || err != nil {
		t.Fatalf("got %d, %v; want 42", n, err)
	}
	bad := filepath.Join(dir, "other.csv")
	if err := os.WriteFile(bad, []byte("alice,x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := lastGeneratedUser(bad); err == nil {
		t.Fatal("a file not written by the generator was accepted")
	}
}

// TestRemoveScaleDB: a new run on an earlier run's folder removes its
// database, lock file and event log (an import refuses a log that is not
// its database's), and a folder without them is no error.
func TestRemoveScaleDB(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "scale.db")
	for _, f := range []string{db, db + ".lock", filepath.Join(db+".events", "00000000000000000000.log")} {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	keep := filepath.Join(dir, "events.csv")
	if err := os.WriteFile(keep, []byte("u1,i1,,1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := removeScaleDB(db); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{db, db + ".lock", db + ".events"} {
		if _, err := os.Stat(f); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s still there (%v)", f, err)
		}
	}
	if _, err := os.Stat(keep); err != nil {
		t.Errorf("events.csv removed: %v", err)
	}
}

// TestScale_itemFeatures: with --item-features, scale writes a record for
// every item of the catalogue, each with one category and that many
// features, which import --items stores as they are: items of one
// category lie near their category's mean.
func TestScale_itemFeatures(t *testing.T) {
	dir := t.TempDir()
	c := scaleConfig{Interactions: 2000, PerUser: 20, Items: 300, ItemExponent: 1, UserExponent: 2, Seed: 3, ItemFeatures: 3}
	events, itemsFile := filepath.Join(dir, "events.csv"), filepath.Join(dir, "items.jsonl")
	if _, err := generateScaleCSV(events, c); err != nil {
		t.Fatal(err)
	}
	if err := generateScaleItems(itemsFile, c); err != nil {
		t.Fatal(err)
	}
	err := runImport(t.Context(), []string{"--db", filepath.Join(dir, "scale.db"), "--format", "csv", "--items", itemsFile, events}, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	st, err := storage.Open(filepath.Join(dir, "scale.db"), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	items, _, err := st.Items(t.Context(), api.Page{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 300 {
		t.Fatalf("%d item records, want one for each of the 300 items", len(items))
	}
	type acc struct {
		n   int
		sum [3]float64
	}
	byCat := map[string]*acc{}
	for _, it := range items {
		if len(it.Categories) != 1 || len(it.Features) != 3 {
			t.Fatalf("item %s: categories %v, features %v; want one category and f0..f2", it.ID, it.Categories, it.Features)
		}
		a := byCat[it.Categories[0]]
		if a == nil {
			a = &acc{}
			byCat[it.Categories[0]] = a
		}
		a.n++
		for j := range 3 {
			a.sum[j] += it.Features[fmt.Sprintf("f%d", j)]
		}
	}
	// Spread within a category (σ 0.5 per feature) against spread of the
	// centres (σ 1): mean squared distance to the own centre is 3·0.25,
	// between two centres 3·2.
	var within, n float64
	for _, it := range items {
		a := byCat[it.Categories[0]]
		for j := range 3 {
			d := it.Features[fmt.Sprintf("f%d", j)] - a.sum[j]/float64(a.n)
			within += d * d
		}
		n++
	}
	if within/n > 1.5 {
		t.Errorf("mean squared distance to the category's centre %.2f, want about 0.75 (items drawn around their centre)", within/n)
	}
}
