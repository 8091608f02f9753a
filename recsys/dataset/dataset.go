// Package dataset reads the public data sets the project evaluates on and
// imports from: MovieLens (u.data + u.item), Last.fm HetRec
// (user_artists.dat + artists.dat) and plain CSV. Readers stream: a callback
// gets one record at a time so a large file is never held in memory twice.
//
// Works cited in the comments are listed in docs/references.md.
package dataset

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Formats lists the names accepted by the readers.
var Formats = []string{"movielens", "lastfm", "csv"}

// Event is one implicit-feedback record of a data set.
type Event struct {
	User, Item string
	// Type is the interaction type the format implies: "rating" for
	// MovieLens, "play" for Last.fm, "view" for CSV.
	Type     string
	Value    float64
	HasValue bool
	Time     time.Time // zero when the file has none
}

// Item is catalogue metadata a data set carries beside its events.
type Item struct {
	ID         string
	Label      string // title (MovieLens) or name (Last.fm)
	Features   map[string]float64
	Categories []string
}

// DefaultMinValue is the relevance threshold a format implies when the user
// gives none: MovieLens ratings ≥ 4 are positive (docs/design.md#cli); Last.fm and
// CSV count every record.
func DefaultMinValue(format string) (float64, bool) {
	if format == "movielens" {
		return 4, true
	}
	return 0, false
}

// CheckFormat returns an error naming the accepted formats.
func CheckFormat(format string) error {
	for _, f := range Formats {
		if f == format {
			return nil
		}
	}
	return fmt.Errorf("unknown format %q (want one of %s)", format, strings.Join(Formats, ", "))
}

// EventsPath is the file holding the events of a data set at path.
func EventsPath(format, path string) string {
	switch format {
	case "movielens":
		return filepath.Join(path, "u.data")
	case "lastfm":
		if st, err := os.Stat(path); err == nil && st.IsDir() {
			return filepath.Join(path, "user_artists.dat")
		}
	}
	return path
}

// ReadEvents streams the events of the data set at path to fn. It stops at
// the first error fn returns.
func ReadEvents(format, path string, fn func(Event) error) error {
	if err := CheckFormat(format); err != nil {
		return err
	}
	f, err := os.Open(EventsPath(format, path))
	if err != nil {
		return err
	}
	defer f.Close()
	switch format {
	case "movielens":
		return readMovieLensEvents(f, fn)
	case "lastfm":
		return readLastFMEvents(f, fn)
	default:
		return readCSVEvents(f, fn)
	}
}

// ReadItems streams the item metadata of the data set at path. Formats or
// folders without item metadata stream nothing.
func ReadItems(format, path string, fn func(Item) error) error {
	if err := CheckFormat(format); err != nil {
		return err
	}
	var name string
	switch format {
	case "movielens":
		name = filepath.Join(path, "u.item")
	case "lastfm":
		st, err := os.Stat(path)
		if err != nil || !st.IsDir() {
			return nil
		}
		name = filepath.Join(path, "artists.dat")
	default:
		return nil
	}
	f, err := os.Open(name)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	} else if err != nil {
		return err
	}
	defer f.Close()
	if format == "movielens" {
		return readMovieLensItems(f, filepath.Join(path, "u.genre"), fn)
	}
	return readLastFMArtists(f, fn)
}

func readMovieLensEvents(r io.Reader, fn func(Event) error) error {
	return eachLine(r, func(n int, line string) error {
		fs := strings.Split(line, "\t")
		if len(fs) < 3 {
			return fmt.Errorf("u.data line %d: want user, item, rating, time separated by tabs", n)
		}
		v, err := parseValue(fs[2])
		if err != nil {
			return fmt.Errorf("u.data line %d: rating: %v", n, err)
		}
		ev := Event{User: fs[0], Item: fs[1], Type: "rating", Value: v, HasValue: true}
		if len(fs) > 3 {
			sec, err := strconv.ParseInt(fs[3], 10, 64)
			if err != nil {
				return fmt.Errorf("u.data line %d: time: %v", n, err)
			}
			ev.Time = time.Unix(sec, 0).UTC()
		}
		return fn(ev)
	})
}

// movieLensGenres is the genre order of u.item's 19 flags, used when the
// folder has no u.genre file.
var movieLensGenres = []string{"unknown", "Action", "Adventure", "Animation", "Children's",
	"Comedy", "Crime", "Documentary", "Drama", "Fantasy", "Film-Noir", "Horror", "Musical",
	"Mystery", "Romance", "Sci-Fi", "Thriller", "War", "Western"}

func readGenres(name string) []string {
	b, err := os.ReadFile(name)
	if err != nil {
		return movieLensGenres
	}
	var gs []string
	for _, line := range strings.Split(string(b), "\n") {
		if g, _, ok := strings.Cut(strings.TrimSpace(line), "|"); ok && g != "" {
			gs = append(gs, g)
		}
	}
	if len(gs) != len(movieLensGenres) {
		return movieLensGenres
	}
	return gs
}

func readMovieLensItems(r io.Reader, genreFile string, fn func(Item) error) error {
	genres := readGenres(genreFile)
	return eachLine(r, func(n int, line string) error {
		fs := strings.Split(line, "|")
		if len(fs) < 5+len(genres) {
			return fmt.Errorf("u.item line %d: want %d fields, got %d", n, 5+len(genres), len(fs))
		}
		it := Item{ID: fs[0], Label: latin1(fs[1]), Features: make(map[string]float64, len(genres))}
		for g, flag := range fs[5 : 5+len(genres)] {
			if flag == "1" {
				it.Features[genres[g]] = 1
				it.Categories = append(it.Categories, genres[g])
			} else {
				it.Features[genres[g]] = 0
			}
		}
		return fn(it)
	})
}

// latin1 converts ISO-8859-1 text (u.item is not UTF-8) to UTF-8.
func latin1(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			rs := make([]rune, len(s))
			for j := 0; j < len(s); j++ {
				rs[j] = rune(s[j])
			}
			return string(rs)
		}
	}
	return s
}

func readLastFMEvents(r io.Reader, fn func(Event) error) error {
	return eachLine(r, func(n int, line string) error {
		fs := strings.Split(line, "\t")
		if n == 1 && len(fs) > 0 && fs[0] == "userID" {
			return nil
		}
		if len(fs) < 3 {
			return fmt.Errorf("user_artists line %d: want userID, artistID, weight", n)
		}
		v, err := parseValue(fs[2])
		if err != nil {
			return fmt.Errorf("user_artists line %d: weight: %v", n, err)
		}
		return fn(Event{User: fs[0], Item: fs[1], Type: "play", Value: v, HasValue: true})
	})
}

func readLastFMArtists(r io.Reader, fn func(Item) error) error {
	return eachLine(r, func(n int, line string) error {
		fs := strings.Split(line, "\t")
		if n == 1 && fs[0] == "id" {
			return nil
		}
		if len(fs) < 2 {
			return fmt.Errorf("artists line %d: want id and name", n)
		}
		return fn(Item{ID: fs[0], Label: fs[1]})
	})
}

// readCSVEvents reads user,item[,value[,timestamp]] with an optional header;
// the timestamp is RFC 3339 or Unix seconds.
func readCSVEvents(r io.Reader, fn func(Event) error) error {
	cr := csv.NewReader(bufio.NewReaderSize(r, 1<<16))
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	for n := 1; ; n++ {
		rec, err := cr.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if len(rec) < 2 {
			return fmt.Errorf("csv line %d: want user,item[,value[,timestamp]]", n)
		}
		ev := Event{User: strings.TrimSpace(rec[0]), Item: strings.TrimSpace(rec[1]), Type: "view"}
		if len(rec) > 2 && strings.TrimSpace(rec[2]) != "" {
			v, err := parseValue(strings.TrimSpace(rec[2]))
			if err != nil {
				if n == 1 {
					continue // header
				}
				return fmt.Errorf("csv line %d: value: %v", n, err)
			}
			ev.Value, ev.HasValue = v, true
		} else if n == 1 && strings.EqualFold(ev.User, "user") {
			continue
		}
		if len(rec) > 3 && strings.TrimSpace(rec[3]) != "" {
			ts := strings.TrimSpace(rec[3])
			if t, err := time.Parse(time.RFC3339, ts); err == nil {
				ev.Time = t
			} else if sec, err := strconv.ParseInt(ts, 10, 64); err == nil {
				ev.Time = time.Unix(sec, 0).UTC()
			} else {
				return fmt.Errorf("csv line %d: timestamp %q is neither RFC 3339 nor Unix seconds", n, ts)
			}
		}
		if err := fn(ev); err != nil {
			return err
		}
	}
}

// parseValue reads a rating, weight or value: a finite number (ParseFloat
// alone would let "NaN" and "Inf" through into the store).
func parseValue(s string) (float64, error) {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, err
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is not a finite number", s)
	}
	return v, nil
}

func eachLine(r io.Reader, fn func(n int, line string) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimRight(sc.Text(), "\r")
		if line == "" {
			continue
		}
		if err := fn(n, line); err != nil {
			return err
		}
	}
	return sc.Err()
}

// Positive is a data set reduced to its distinct positive (user, item) pairs
// with dense indices in first-seen order: pair k is (Users[k], Items[k]).
type Positive struct {
	Name             string
	UserIDs, ItemIDs []string
	Users, Items     []uint32
	// Times holds the Unix time of pair k's first positive event in the
	// file when every such event has one (MovieLens, CSV with timestamps),
	// else nil (Last.fm's user_artists.dat has play counts, no times).
	Times []int64
}

// Positives reads a data set and keeps the events whose value reaches
// minValue (nil: the format's default, see DefaultMinValue), each pair once.
func Positives(format, path string, minValue *float64) (*Positive, error) {
	min, useMin := DefaultMinValue(format)
	if minValue != nil {
		min, useMin = *minValue, true
	}
	p := &Positive{Name: filepath.Base(filepath.Clean(path))}
	users, items := map[string]uint32{}, map[string]uint32{}
	seen := map[uint64]struct{}{}
	timed := true
	err := ReadEvents(format, path, func(ev Event) error {
		if useMin && ev.HasValue && ev.Value < min {
			return nil
		}
		u, ok := users[ev.User]
		if !ok {
			u = uint32(len(p.UserIDs))
			users[ev.User] = u
			p.UserIDs = append(p.UserIDs, ev.User)
		}
		i, ok := items[ev.Item]
		if !ok {
			i = uint32(len(p.ItemIDs))
			items[ev.Item] = i
			p.ItemIDs = append(p.ItemIDs, ev.Item)
		}
		key := uint64(u)<<32 | uint64(i)
		if _, dup := seen[key]; dup {
			return nil
		}
		seen[key] = struct{}{}
		p.Users = append(p.Users, u)
		p.Items = append(p.Items, i)
		if timed = timed && !ev.Time.IsZero(); timed {
			p.Times = append(p.Times, ev.Time.Unix())
		}
		return nil
	})
	if !timed {
		p.Times = nil
	}
	if err != nil {
		return nil, err
	}
	if len(p.Users) == 0 {
		return nil, fmt.Errorf("%s: no positive interactions (is --min-value too high?)", path)
	}
	return p, nil
}
