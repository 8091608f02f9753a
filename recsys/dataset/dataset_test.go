package dataset

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/recsys-engine/recsys/recsys/dataset/datasettest"
)

func writeFile(tb testing.TB, dir, name, text string) string {
	tb.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		tb.Fatal(err)
	}
	return p
}

func TestPositives_movielens(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "u.data", "1\t10\t5\t881250949\n1\t11\t3\t881250950\n2\t10\t4\t881250951\n1\t10\t4\t881250952\n")
	p, err := Positives("movielens", dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Ratings ≥ 4 by default; (1,10) appears twice but counts once.
	if !reflect.DeepEqual(p.UserIDs, []string{"1", "2"}) || !reflect.DeepEqual(p.ItemIDs, []string{"10"}) {
		t.Fatalf("ids = %v %v", p.UserIDs, p.ItemIDs)
	}
	if !reflect.DeepEqual(p.Users, []uint32{0, 1}) || !reflect.DeepEqual(p.Items, []uint32{0, 0}) {
		t.Fatalf("pairs = %v %v", p.Users, p.Items)
	}
	// Each pair's time is its first positive event's: (1,10) at
	// 881250949, not its later repeat.
	if !reflect.DeepEqual(p.Times, []int64{881250949, 881250951}) {
		t.Fatalf("times = %v", p.Times)
	}
	three := 3.0
	p, err = Positives("movielens", dir, &three)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Users) != 3 {
		t.Fatalf("with --min-value 3: %d pairs, want 3", len(p.Users))
	}
}

func TestReadItems_movielensGenres(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "u.item", "7|Caf\xe9 (1995)|01-Jan-1995||http://x|0|1|0|0|0|1|0|0|0|0|0|0|0|0|0|0|0|0|0\n")
	var got []Item
	if err := ReadItems("movielens", dir, func(it Item) error { got = append(got, it); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].ID != "7" || got[0].Label != "Café (1995)" {
		t.Fatalf("items = %+v", got)
	}
	if !reflect.DeepEqual(got[0].Categories, []string{"Action", "Comedy"}) || got[0].Features["Action"] != 1 ||
		got[0].Features["Drama"] != 0 || len(got[0].Features) != 19 {
		t.Fatalf("genres = %v %v", got[0].Categories, got[0].Features)
	}
}

func TestReadEvents_csvAndLastfm(t *testing.T) {
	dir := t.TempDir()
	csvPath := writeFile(t, dir, "e.csv", "user,item,value,timestamp\na,x,2,2026-01-02T03:04:05Z\nb,y,,\nc,z,1,1700000000\n")
	var evs []Event
	if err := ReadEvents("csv", csvPath, func(e Event) error { evs = append(evs, e); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(evs) != 3 || evs[0].Value != 2 || !evs[0].HasValue || evs[1].HasValue || evs[2].Time.Unix() != 1700000000 {
		t.Fatalf("csv events = %+v", evs)
	}
	// A non-numeric value on the first line is a header; on a later line, an error.
	bad := writeFile(t, dir, "bad.csv", "a,x,1\nb,y,zz\n")
	if err := ReadEvents("csv", bad, func(Event) error { return nil }); err == nil {
		t.Fatal("a non-numeric value was accepted")
	}
	writeFile(t, dir, "user_artists.dat", "userID\tartistID\tweight\n2\t51\t13883\n2\t52\t1\n")
	p, err := Positives("lastfm", dir, nil)
	if err != nil || len(p.Users) != 2 || p.Times != nil {
		t.Fatalf("lastfm positives = %+v, %v (want no times: play counts carry none)", p, err)
	}
	// A CSV with a timestamp on some lines only has no times.
	p, err = Positives("csv", csvPath, nil)
	if err != nil || len(p.Users) != 3 || p.Times != nil {
		t.Fatalf("csv positives = %+v, %v", p, err)
	}
	if err := CheckFormat("parquet"); err == nil {
		t.Fatal("unknown format accepted")
	}
}

func TestPositives_realMovieLens(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "shared", "datasets", "ml-100k")
	datasettest.Require(t, dir)
	p, err := Positives("movielens", dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	// MovieLens 100K has 55,375 ratings of 4 or 5.
	if len(p.Users) != 55375 {
		t.Fatalf("positives = %d, want 55375", len(p.Users))
	}
}
