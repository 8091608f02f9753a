package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/recsys/dataset/datasettest"
	"github.com/recsys-engine/recsys/storage"
	"github.com/recsys-engine/recsys/storage/bolttest"
)

// withoutClock drops the creation and update times an item record takes
// from the server's clock, which differ between two runs of import.
func withoutClock(tb testing.TB, v []byte) []byte {
	tb.Helper()
	var m map[string]any
	if err := json.Unmarshal(v[8:], &m); err != nil {
		tb.Fatal(err)
	}
	delete(m, "created")
	delete(m, "updated")
	js, _ := json.Marshal(m)
	return append(v[:8:8], js...)
}

// writeMovieLensLike writes a MovieLens-format folder: u.item for half the
// items (the rest first appear in events), and u.data with repeated pairs
// re-rated on later days, ratings on both sides of the threshold.
func writeMovieLensLike(tb testing.TB, dir string) {
	tb.Helper()
	rng := rand.New(rand.NewPCG(11, 12))
	var items strings.Builder
	for i := 1; i <= 100; i += 2 {
		flags := make([]string, 19)
		for g := range flags {
			flags[g] = "0"
			if rng.IntN(4) == 0 {
				flags[g] = "1"
			}
		}
		fmt.Fprintf(&items, "%d|Film %d (1995)|01-Jan-1995||http://x|%s\n", i, i, strings.Join(flags, "|"))
	}
	var data strings.Builder
	t0 := int64(880000000)
	for range 5000 {
		u, i := 1+int(80*rng.Float64()*rng.Float64()), 1+int(120*rng.Float64()*rng.Float64())
		fmt.Fprintf(&data, "%d\t%d\t%d\t%d\n", u, i, 1+rng.IntN(5), t0+rng.Int64N(30*86400))
	}
	for name, text := range map[string]string{"u.item": items.String(), "u.data": data.String()} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
}

// TestImport_bulkEqualsIncremental runs `recsys import` into a new
// database (the bulk load) and with --incremental (5,000-event
// transactions through the store), and compares the two files bucket by
// bucket, key by key, value by value: on MovieLens 100K, and on a
// MovieLens-format folder with item records and repeated pairs.
func TestImport_bulkEqualsIncremental(t *testing.T) {
	gen := t.TempDir()
	writeMovieLensLike(t, gen)
	for _, c := range []struct{ name, dir string }{
		{"ml-100k", filepath.Join("..", "shared", "datasets", "ml-100k")},
		{"generated", gen},
	} {
		t.Run(c.name, func(t *testing.T) {
			datasettest.Require(t, c.dir)
			dir := t.TempDir()
			bulk, inc := filepath.Join(dir, "bulk.db"), filepath.Join(dir, "inc.db")
			var out bytes.Buffer
			if err := runImport(t.Context(), []string{"--db", bulk, "--format", "movielens", c.dir}, &out, io.Discard); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out.String(), "bulk load") {
				t.Fatalf("a new database was not bulk loaded: %s", out.String())
			}
			if err := runImport(t.Context(), []string{"--db", inc, "--format", "movielens", "--incremental", c.dir}, io.Discard, io.Discard); err != nil {
				t.Fatal(err)
			}
			// Each file names its own event log in meta "log/…".
			a, b := bolttest.File(t, inc).Without("meta", "log/"), bolttest.File(t, bulk).Without("meta", "log/")
			if len(a["pairs"].Keys) == 0 {
				t.Fatal("nothing imported")
			}
			// Item records are compared without their clock times.
			itemsWithoutClock := func(bucket string, v []byte) []byte {
				if bucket != "items" {
					return v
				}
				return withoutClock(t, v)
			}
			for _, d := range bolttest.Diff(a, b, itemsWithoutClock) {
				t.Error(d)
			}

			// A second import into the filled database takes the
			// incremental path and says so.
			out.Reset()
			if err := runImport(t.Context(), []string{"--db", bulk, "--format", "movielens", c.dir}, &out, io.Discard); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out.String(), "already holds data") {
				t.Fatalf("second import: %s", out.String())
			}
		})
	}
}

// checkComplete fails unless path is a whole database: bbolt's consistency
// check passes and it holds all n events as n pairs.
func checkComplete(tb testing.TB, path string, n int64) {
	tb.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	err = db.View(func(tx *bolt.Tx) error {
		for err := range tx.Check() {
			return fmt.Errorf("bbolt check: %w", err)
		}
		events := tx.Bucket([]byte("meta")).Get([]byte("c/events"))
		pairs := tx.Bucket([]byte("pairs")).Stats().KeyN
		if len(events) != 8 || int64(binary.BigEndian.Uint64(events)) != n || int64(pairs) != n {
			return fmt.Errorf("events counter %x and %d pairs, want %d", events, pairs, n)
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
}

// TestImport_sigkillBulk runs the real binary's bulk import of a generated
// CSV and SIGKILLs it at a random moment in each of eight slices of an
// uninterrupted run's time, into a new path and into a pristine database
// (as serve leaves it) by turns. Each time the target must be absent, or
// the old file byte for byte, or a complete database that bbolt's check
// passes with every event; and the next import must succeed (opening the
// database and its event log) and leave no temporary file or log folder.
func TestImport_sigkillBulk(t *testing.T) {
	bin := testBinary(t)
	dir := t.TempDir()
	csv := filepath.Join(dir, "events.csv")
	const n = 200_000
	if _, err := generateScaleCSV(csv, scaleConfig{Interactions: n, PerUser: 50, Items: 2000, ItemExponent: 1, UserExponent: 2, Seed: 5}); err != nil {
		t.Fatal(err)
	}
	importInto := func(db, data string) {
		t.Helper()
		if out, err := execCommand(bin, "import", "--db", db, "--format", "csv", data); err != nil {
			t.Fatalf("import: %v\n%s", err, out)
		}
	}
	start := time.Now()
	importInto(filepath.Join(dir, "full.db"), csv)
	full := time.Since(start)
	checkComplete(t, filepath.Join(dir, "full.db"), n)

	tiny := filepath.Join(dir, "tiny.csv")
	if err := os.WriteFile(tiny, []byte("x1,y1\nx2,y2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 1))
	const trials = 8
	for trial := range trials {
		db := filepath.Join(dir, fmt.Sprintf("t%d", trial), "recsys.db")
		if err := os.MkdirAll(filepath.Dir(db), 0o755); err != nil {
			t.Fatal(err)
		}
		var old []byte
		if trial%2 == 1 {
			st, err := storage.Open(db, storage.Options{})
			if err != nil {
				t.Fatal(err)
			}
			st.Close()
			if old, err = os.ReadFile(db); err != nil {
				t.Fatal(err)
			}
		}
		cmd := exec.Command(bin, "import", "--db", db, "--format", "csv", csv)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		at := time.Duration((float64(trial) + rng.Float64()) / trials * 1.15 * float64(full))
		time.Sleep(at)
		_ = cmd.Process.Kill() // SIGKILL
		_ = cmd.Wait()
		stage := lastLine(stderr.String())

		b, err := os.ReadFile(db)
		outcome := "complete"
		switch {
		case old == nil && errors.Is(err, os.ErrNotExist):
			outcome = "absent"
		case err != nil:
			t.Fatal(err)
		case old != nil && bytes.Equal(b, old):
			outcome = "old file"
		default:
			checkComplete(t, db, n)
		}
		t.Logf("trial %d: SIGKILL after %v of %v (last stage %q): %s", trial, at.Round(time.Millisecond), full.Round(time.Millisecond), stage, outcome)
		if outcome == "complete" {
			importInto(db, tiny) // into a full database: the incremental path
		} else {
			importInto(db, csv)
			checkComplete(t, db, n)
		}
		left, _ := filepath.Glob(db + ".bulk-*")
		logs, _ := filepath.Glob(db + ".events.bulk-*")
		if left = append(left, logs...); len(left) != 0 {
			t.Errorf("trial %d: temporary files left after the next import: %v", trial, left)
		}
	}
	if t.Failed() {
		t.Logf("kill moments drawn with seed %d", seed)
	}
}

// TestImport_itemsFile imports a CSV of events with an --items file of
// JSON lines, into a new database (the bulk load) and incrementally: both
// hold each line's categories, features and labels, and a line for an id
// the events also name replaces nothing but adds its record. A bad line
// stops the import naming the file, the line and the field, and leaves
// no database behind.
func TestImport_itemsFile(t *testing.T) {
	dir := t.TempDir()
	csv := filepath.Join(dir, "events.csv")
	items := filepath.Join(dir, "items.jsonl")
	if err := os.WriteFile(csv, []byte("user,item\nu1,a\nu1,b\nu2,a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	lines := `{"id":"a","categories":["shoes","red"],"features":{"price":12.5}}

{"id":"c","labels":{"title":"Boots"},"hidden":true}
`
	if err := os.WriteFile(items, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, mode := range [][]string{nil, {"--incremental"}} {
		db := filepath.Join(dir, fmt.Sprintf("m%d.db", len(mode)))
		args := append([]string{"--db", db, "--format", "csv", "--items", items}, mode...)
		var out bytes.Buffer
		if err := runImport(t.Context(), append(args, csv), &out, io.Discard); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), "3 events and 2 item records") {
			t.Errorf("%v: import said %q, want 3 events and 2 item records", mode, out.String())
		}
		st, err := storage.Open(db, storage.Options{})
		if err != nil {
			t.Fatal(err)
		}
		a, errA := st.Item(t.Context(), "a")
		c, errC := st.Item(t.Context(), "c")
		b, errB := st.Item(t.Context(), "b")
		st.Close()
		if errA != nil || errB != nil || errC != nil {
			t.Fatalf("%v: items: %v %v %v", mode, errA, errB, errC)
		}
		if strings.Join(a.Categories, ",") != "red,shoes" || a.Features["price"] != 12.5 || a.Positives != 2 {
			t.Errorf("%v: item a = %+v, want categories red,shoes, price 12.5, 2 positives", mode, a)
		}
		if c.Labels["title"] != "Boots" || !c.Hidden || c.Positives != 0 {
			t.Errorf("%v: item c = %+v, want title Boots, hidden, no positives", mode, c)
		}
		if len(b.Categories) != 0 || b.Positives != 1 {
			t.Errorf("%v: item b = %+v, want no categories and 1 positive", mode, b)
		}
	}

	for _, c := range []struct{ line, want string }{
		{`{"id":"d","categories":[""]}`, "line 2: categories[0]"},
		{`{"categories":["x"]}`, "line 2: id: is required"},
		{`{"id":"d","colour":"red"}`, "line 2: "},
	} {
		if err := os.WriteFile(items, []byte(`{"id":"a"}`+"\n"+c.line+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		db := filepath.Join(dir, "bad.db")
		err := runImport(t.Context(), []string{"--db", db, "--format", "csv", "--items", items, csv}, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), items+" "+c.want) {
			t.Errorf("line %s: err = %v, want it to name %q", c.line, err, c.want)
		}
		if _, statErr := os.Stat(db); !errors.Is(statErr, os.ErrNotExist) {
			t.Errorf("line %s: a failed bulk import left %s (%v)", c.line, db, statErr)
		}
	}
}

// An --items file decoded on several workers comes out in file order
// across chunk boundaries (a later line of an id after the earlier one),
// and a bad line stops the stream there: every line before it, and none
// after, is put, and the error names that line, the first bad one in
// file order even when a later chunk also fails.
func TestDecodeItemLines_order(t *testing.T) {
	var file strings.Builder
	const lines = 3*itemChunkLines + 10
	bad := itemChunkLines + 7 // in the second chunk
	for n := 1; n <= lines; n++ {
		switch {
		case n == bad:
			file.WriteString(`{"id":"x","features":{"p":"high"}}` + "\n")
		case n == lines-1:
			file.WriteString(`{"id":""}` + "\n") // a later bad line
		case n%500 == 0:
			file.WriteString("\n")
		default:
			fmt.Fprintf(&file, `{"id":"i%d","features":{"n":%d}}`+"\n", n%1500, n)
		}
	}
	for _, workers := range []int{1, 2, 4} {
		var got []float64
		err := decodeItemLines(strings.NewReader(file.String()), "items.jsonl", workers, func(it api.Item) error {
			got = append(got, it.Features["n"])
			return nil
		})
		want := fmt.Sprintf("items.jsonl line %d: ", bad)
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Fatalf("%d workers: error %v, want it to start %q", workers, err, want)
		}
		// Lines 1 … bad−1 without the blank ones (500 and 1000).
		if len(got) != bad-1-2 {
			t.Fatalf("%d workers: %d items put, want %d", workers, len(got), bad-3)
		}
		for k := 1; k < len(got); k++ {
			if got[k] <= got[k-1] {
				t.Fatalf("%d workers: item %d has line %v after line %v", workers, k, got[k], got[k-1])
			}
		}
	}
	// Without the bad lines every line but the blank ones is put.
	good := strings.ReplaceAll(strings.ReplaceAll(file.String(), `{"id":"x","features":{"p":"high"}}`, `{"id":"x"}`), `{"id":""}`, `{"id":"y"}`)
	n := 0
	if err := decodeItemLines(strings.NewReader(good), "items.jsonl", 2, func(api.Item) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	if want := lines - lines/500; n != want {
		t.Errorf("%d items put, want %d", n, want)
	}
}
