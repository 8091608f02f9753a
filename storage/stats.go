package storage

import (
	"bytes"
	"context"
	"maps"
	"os"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/recsys-engine/recsys/api"
)

// The counters and sizes the stats read: meta's counters with the tail's
// changes, the per-day activity and the file's sizes.

// Counts reads the counters.
func (s *Store) Counts(ctx context.Context) (api.Counts, error) {
	var c api.Counts
	if err := s.prefold(ctx); err != nil {
		return c, err
	}
	err := s.viewTail(ctx, func(tx *bolt.Tx, tail []*tailGen) error {
		m := tx.Bucket(bucketMeta)
		if err := s.foldTail(tx, tail); err != nil {
			return err
		}
		get := func(name string) int64 { return counter(m, name) + tailCounter(tail, name) }
		c = api.Counts{
			Users:        get(counterUsers),
			Items:        get(counterItems),
			Interactions: get(counterPairs),
			Positives:    get(counterPositives),
			Events:       get(counterEvents),
		}
		return nil
	})
	return c, err
}

// Activity returns the number of events per UTC day (by event time), oldest
// first, for the most recent days that have any.
func (s *Store) Activity(ctx context.Context, days int) ([]api.DayCount, error) {
	var out []api.DayCount
	err := s.viewTail(ctx, func(tx *bolt.Tx, tail []*tailGen) error {
		counts := map[string]int64{}
		prefix := []byte(dayPrefix)
		c := tx.Bucket(bucketMeta).Cursor()
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			counts[string(k[len(prefix):])] = int64(getU64(v))
		}
		for _, g := range tail {
			addAll(counts, g.days)
		}
		for _, name := range slices.Sorted(maps.Keys(counts)) {
			day, err := time.Parse("20060102", name)
			if err != nil || counts[name] <= 0 {
				continue
			}
			out = append(out, api.DayCount{Day: day.Format(time.DateOnly), Events: counts[name]})
		}
		return nil
	})
	if len(out) > days {
		out = out[len(out)-days:]
	}
	return out, err
}

// Size is the size of the database file in bytes.
func (s *Store) Size() int64 {
	var n int64
	_ = s.db.View(func(tx *bolt.Tx) error { n = tx.Size(); return nil })
	return n
}

// FileBytes is the size of the database file on disk, 0 if it cannot be
// read (bbolt grows the file ahead of the pages in use, Size).
func (s *Store) FileBytes() int64 {
	fi, err := os.Stat(s.db.Path())
	if err != nil {
		return 0
	}
	return fi.Size()
}

// FreeBytes is the part of the file in free pages: pages of deleted
// records, which later writes reuse but which stay in the file until
// Compact.
func (s *Store) FreeBytes() int64 { return int64(s.db.Stats().FreeAlloc) }

func counter(meta *bolt.Bucket, name string) int64 {
	return int64(getU64(meta.Get([]byte("c/" + name))))
}

func addCounter(meta *bolt.Bucket, name string, delta int64) error {
	if delta == 0 {
		return nil
	}
	// A counter at zero is deleted, as the day counters and popularity
	// are, so the file's content depends on the counts alone, not on the
	// order of the writes that made them (the bulk loader writes only
	// counters above zero).
	v := counter(meta, name) + delta
	if v <= 0 {
		return meta.Delete([]byte("c/" + name))
	}
	return meta.Put([]byte("c/"+name), u64(uint64(v)))
}
