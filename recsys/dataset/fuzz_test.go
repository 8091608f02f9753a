package dataset

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

// checkEvent is what every reader promises of an event it emits.
func checkEvent(t *testing.T, format string, ev Event) {
	t.Helper()
	if ev.HasValue && (math.IsNaN(ev.Value) || math.IsInf(ev.Value, 0)) {
		t.Fatalf("%s: non-finite value %v emitted", format, ev.Value)
	}
	if ev.Type == "" {
		t.Fatalf("%s: event without a type", format)
	}
}

// FuzzReadEvents feeds arbitrary file contents to the MovieLens (u.data),
// Last.fm (user_artists.dat) and CSV event readers: each returns an error
// or emits events with a type and a finite value, never panics; a reader
// that stops with an error has said which line.
func FuzzReadEvents(f *testing.F) {
	for _, s := range []string{
		"1\t10\t5\t881250949\n1\t11\t3\t881250950\n",
		"userID\tartistID\tweight\n2\t51\t13883\n",
		"user,item,value,timestamp\nu1,i1,2.5,2026-01-02T03:04:05Z\nu2,i2,,1700000000\n",
		"u1,i1\n", "1\t2\tNaN\t0\n", "1\t2\t5\tx\n", "a,b,Inf\n", "a,b,1,notatime\n", "\"unterminated,x\n",
		"1\t2\n", "a\r\n", "\n\n\n", "a,b,1e400\n", "x,y,-0\n",
	} {
		f.Add([]byte(s))
	}
	readers := map[string]func([]byte, func(Event) error) error{
		"movielens": func(b []byte, fn func(Event) error) error { return readMovieLensEvents(bytes.NewReader(b), fn) },
		"lastfm":    func(b []byte, fn func(Event) error) error { return readLastFMEvents(bytes.NewReader(b), fn) },
		"csv":       func(b []byte, fn func(Event) error) error { return readCSVEvents(bytes.NewReader(b), fn) },
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for format, read := range readers {
			n := 0
			err := read(data, func(ev Event) error {
				checkEvent(t, format, ev)
				n++
				return nil
			})
			if err != nil && format != "csv" && !strings.Contains(err.Error(), "line") && !strings.Contains(err.Error(), "too long") {
				t.Fatalf("%s: error without a line number: %v", format, err)
			}
			if n > bytes.Count(data, []byte("\n"))+bytes.Count(data, []byte("\r"))+1 {
				t.Fatalf("%s: %d events from %d lines", format, n, bytes.Count(data, []byte("\n"))+1)
			}
		}
	})
}

// FuzzReadItems feeds arbitrary contents to the MovieLens u.item and
// Last.fm artists.dat readers: an error or items whose features are the
// genre flags (0 or 1), whose label is valid UTF-8 (u.item is Latin-1), and
// whose fields are single columns.
func FuzzReadItems(f *testing.F) {
	for _, s := range []string{
		"1|Toy Story (1995)|01-Jan-1995||http://x|0|0|0|1|1|1|0|0|0|0|0|0|0|0|0|0|0|0|0\n",
		"2|Caf\xe9|01-Jan-1995||u|0|0|0|0|0|0|0|0|0|0|0|0|0|0|0|0|0|0|1\n",
		"id\tname\turl\tpictureURL\n1\tMALICE MIZER\thttp://x\n", "1|short\n", "1\n", "|||||\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		_ = readMovieLensItems(bytes.NewReader(data), "/nonexistent/u.genre", func(it Item) error {
			if len(it.Features) != len(movieLensGenres) {
				t.Fatalf("%d features, want %d", len(it.Features), len(movieLensGenres))
			}
			for g, v := range it.Features {
				if v != 0 && v != 1 {
					t.Fatalf("genre %s = %v", g, v)
				}
			}
			if !isUTF8(it.Label) {
				t.Fatalf("label %q is not UTF-8", it.Label)
			}
			return nil
		})
		_ = readLastFMArtists(bytes.NewReader(data), func(it Item) error {
			if strings.Contains(it.ID, "\t") || strings.Contains(it.Label, "\t") {
				t.Fatalf("field with a tab emitted: %+v", it)
			}
			return nil
		})
	})
}

func isUTF8(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }
