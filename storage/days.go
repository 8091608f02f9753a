package storage

import (
	"bytes"

	bolt "go.etcd.io/bbolt"

	"github.com/recsys-engine/recsys/storage/record"
)

// The per-day event counters ("c/d/<YYYYMMDD>" in meta) must sum to the
// events counter after deletes too, so a deleted pair's events are taken
// off the days they happened on. A pair record keeps only its first and
// latest timestamps, so pair_days keeps the rest: per pair, the events on
// each day other than the day of its first event. Most pairs (one event,
// or repeats within a day) have no entry, and ingest writes one only for a
// repeat on a later day.

// dayPrefix starts the meta keys of the per-day counters.
const dayPrefix = "c/d/"

// pairDayKey is user | item | day.
func pairDayKey(pair []byte, day string) string {
	return string(pair) + day
}

// addDay adds d to a day's counter, deleting it at zero so that /stats
// lists only days with events.
func addDay(meta *bolt.Bucket, day string, d int64) error {
	if d == 0 {
		return nil
	}
	key := []byte(dayPrefix + day)
	v := int64(getU64(meta.Get(key))) + d
	if v <= 0 {
		return meta.Delete(key)
	}
	return meta.Put(key, u64(uint64(v)))
}

// forgetPairDays takes the events of a pair about to be deleted off the
// per-day counters, and deletes its pair_days entries.
func (w *writer) forgetPairDays(pair []byte, p record.Pair) error {
	var keys [][]byte
	later := int64(0)
	c := w.pairDays.Cursor()
	for k, v := c.Seek(pair); k != nil && bytes.HasPrefix(k, pair); k, v = c.Next() {
		n := int64(getU64(v))
		w.days[string(k[len(pair):])] -= n
		later += n
		keys = append(keys, append([]byte(nil), k...))
	}
	w.days[record.DayOf(p.First)] -= max(p.Count-later, 0)
	for _, k := range keys {
		if err := w.pairDays.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// migrateDays brings a version 2 file to version 3: it had no pair_days,
// and its deletes did not touch the per-day counters, which may therefore
// sum to more than the events counter. The counters are rebuilt from the
// live pairs: a pair's events on the day of its latest event (one, when
// that day differs from the first event's) and the rest on the day of its
// first event, which is exact for every pair whose events fall on at most
// two days in arrival order (all of MovieLens: one rating per pair). The
// events counter is set to the sum, so the two agree from then on.
func migrateDays(tx *bolt.Tx) error {
	meta, pairDays := tx.Bucket(bucketMeta), tx.Bucket(bucketPairDays)
	days := map[string]int64{}
	total := int64(0)
	c := tx.Bucket(bucketPairs).Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		p, err := decodePair(v)
		if err != nil {
			return err
		}
		total += p.Count
		first, last := record.DayOf(p.First), record.DayOf(p.Last)
		if p.Count >= 2 && last != first {
			days[last]++
			days[first] += p.Count - 1
			if err := pairDays.Put([]byte(pairDayKey(k, last)), u64(1)); err != nil {
				return err
			}
			continue
		}
		days[first] += p.Count
	}
	var old [][]byte
	mc := meta.Cursor()
	for k, _ := mc.Seek([]byte(dayPrefix)); k != nil && bytes.HasPrefix(k, []byte(dayPrefix)); k, _ = mc.Next() {
		old = append(old, append([]byte(nil), k...))
	}
	for _, k := range old {
		if err := meta.Delete(k); err != nil {
			return err
		}
	}
	for day, n := range days {
		if err := addDay(meta, day, n); err != nil {
			return err
		}
	}
	if err := meta.Put([]byte("c/"+counterEvents), u64(uint64(total))); err != nil {
		return err
	}
	return meta.Put(keySchema, u64(SchemaVersion))
}
