package storage

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/storage/record"
)

// Online measurement on bbolt (docs/design.md#online): the impression log,
// attributions and their counters, and experiments. The layout is in
// schema.go.

var keyRunningExperiment = []byte("experiment/running")

// onlineKey is day (YYYYMMDD) | 0 | model | 0 | experiment | 0 | arm, and
// | 0 | placement for a list answered for one: the key of a list without
// a placement is the key of schema version 6, from before placements were
// counted, so its counters and the older ones are one row.
func onlineKey(c api.OnlineCount) []byte {
	k := strings.ReplaceAll(c.Day, "-", "") + "\x00" + c.Model + "\x00" + c.Experiment + "\x00" + c.Arm
	if c.Placement != "" {
		k += "\x00" + c.Placement
	}
	return []byte(k)
}

// decodeOnline reads a counter: onlineKey's key and the four counters.
func decodeOnline(k, v []byte) (api.OnlineCount, error) {
	f := strings.SplitN(string(k), "\x00", 5)
	if len(f) < 4 || len(f[0]) != 8 || len(v) != 32 || len(f) == 5 && f[4] == "" {
		return api.OnlineCount{}, fmt.Errorf("online counter %q is damaged", k)
	}
	n := func(i int) int64 { return int64(binary.BigEndian.Uint64(v[8*i:])) }
	c := api.OnlineCount{Day: f[0][:4] + "-" + f[0][4:6] + "-" + f[0][6:], Model: f[1], Experiment: f[2], Arm: f[3],
		Lists: n(0), Impressions: n(1), Clicks: n(2), Conversions: n(3)}
	if len(f) == 5 {
		c.Placement = f[4]
	}
	return c, nil
}

// PutImpressions records lists and counts them, in one transaction. The
// log is keyed by time first (impKey), so a batch lands at the end of the
// B-tree instead of dirtying pages all over it; a user's recent lists are
// found through the in-memory index (online_recent.go).
func (s *Store) PutImpressions(ctx context.Context, imps []api.Impression) error {
	if len(imps) == 0 {
		return nil
	}
	idx, err := s.recentIndex(ctx, 0)
	if err != nil {
		return err
	}
	var added []api.Impression
	err = s.update(ctx, func(tx *bolt.Tx) error {
		added = added[:0]
		b, ob := tx.Bucket(bucketImps), tx.Bucket(bucketOnline)
		// The keys are times, so lists land at the end: pages split full
		// rather than half empty (bbolt's default for keys in any order).
		b.FillPercent = 1
		for _, imp := range imps {
			k, ok := impKey(imp.ID)
			if !ok {
				return fmt.Errorf("impression %q: not an id of api.NewRecommendationID", imp.ID)
			}
			if b.Get(k) != nil {
				continue // a retried flush: counted already
			}
			if err := b.Put(k, encodeImpression(imp)); err != nil {
				return err
			}
			added = append(added, imp)
		}
		for _, c := range record.TallyShown(added) {
			if err := addOnline(ob, onlineKey(c), [4]int64{c.Lists, c.Impressions, 0, 0}); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		idx.add(added)
	}
	return err
}

// PruneImpressions deletes the oldest lists shown before before, at most
// limit, and their attributions (api.OnlineStore). Both buckets are in time
// order (impKey; a recommendation id starts with its time in hex), so both
// are cut from their first key.
func (s *Store) PruneImpressions(ctx context.Context, before time.Time, limit int) (int, error) {
	if limit <= 0 || before.UnixNano() <= 0 {
		return 0, nil
	}
	cut := binary.BigEndian.AppendUint64(nil, uint64(before.UnixNano()))
	n := 0
	err := s.update(ctx, func(tx *bolt.Tx) error {
		gone, err := deleteLeading(tx.Bucket(bucketImps), limit, func(k []byte) bool { return bytes.Compare(k[:8], cut) < 0 })
		if n = len(gone); n == 0 || err != nil {
			return err
		}
		// Attribution keys are id | 0 | position, and ids of one time
		// sort by their suffix as the log does: everything up to last's.
		last := string(gone[n-1][8:])
		_, err = deleteLeading(tx.Bucket(bucketAttrib), -1, func(k []byte) bool {
			id, _, _ := bytes.Cut(k, []byte{0})
			return string(id) <= last
		})
		return err
	})
	return n, err
}

// deleteLeading deletes b's first keys while they satisfy while, at most
// limit of them (negative: no limit), and returns them. The keys are read
// in one pass and then deleted: a cursor's First after each delete would
// step over every leaf emptied so far.
func deleteLeading(b *bolt.Bucket, limit int, while func(k []byte) bool) ([][]byte, error) {
	var keys [][]byte
	c := b.Cursor()
	for k, _ := c.First(); k != nil && len(keys) != limit && while(k); k, _ = c.Next() {
		keys = append(keys, bytes.Clone(k))
	}
	for _, k := range keys {
		if err := b.Delete(k); err != nil {
			return keys, err
		}
	}
	return keys, nil
}

// impKey is the log key of a list: its time (8 bytes, BE) and its id.
func impKey(id string) ([]byte, bool) {
	at, ok := api.RecommendationTime(id)
	if !ok {
		return nil, false
	}
	return append(binary.BigEndian.AppendUint64(make([]byte, 0, 8+len(id)), uint64(at.UnixNano())), id...), true
}

// encodeImpression is an impression as stored: user, model, version,
// experiment, arm and the items, each a uvarint length and its bytes, the
// items after their count (the time and the id are the key), then the
// placement the same way when there is one. A list of schema version 6,
// from before placements were recorded, ends after its items, as one
// without a placement does.
func encodeImpression(imp api.Impression) []byte {
	head := []string{imp.UserID, imp.Model, imp.ModelVersion, imp.Experiment, imp.Arm}
	n := binary.MaxVarintLen32
	for _, f := range append(head, imp.Items...) {
		n += len(f) + binary.MaxVarintLen32
	}
	v := make([]byte, 0, n)
	for _, f := range head {
		v = append(binary.AppendUvarint(v, uint64(len(f))), f...)
	}
	v = binary.AppendUvarint(v, uint64(len(imp.Items)))
	for _, it := range imp.Items {
		v = append(binary.AppendUvarint(v, uint64(len(it))), it...)
	}
	if imp.Placement != "" {
		v = append(binary.AppendUvarint(v, uint64(len(imp.Placement))), imp.Placement...)
	}
	return v
}

// decodeImpression reads a log entry.
func decodeImpression(k, v []byte) (api.Impression, error) {
	imp := api.Impression{ID: string(k[8:]), At: record.FromNano(int64(binary.BigEndian.Uint64(k)))}
	bad := false
	str := func() string {
		n, w := binary.Uvarint(v)
		if w <= 0 || uint64(len(v)-w) < n {
			bad = true
			return ""
		}
		f := string(v[w : w+int(n)])
		v = v[w+int(n):]
		return f
	}
	imp.UserID, imp.Model, imp.ModelVersion, imp.Experiment, imp.Arm = str(), str(), str(), str(), str()
	n, w := binary.Uvarint(v)
	if bad || w <= 0 || n > uint64(len(v)) {
		return imp, fmt.Errorf("impression %q is damaged", imp.ID)
	}
	v = v[w:]
	imp.Items = make([]string, n)
	for k := range imp.Items {
		imp.Items[k] = str()
	}
	if len(v) > 0 && !bad {
		if imp.Placement = str(); imp.Placement == "" || len(v) > 0 {
			bad = true
		}
	}
	if bad {
		return imp, fmt.Errorf("impression %q is damaged", imp.ID)
	}
	return imp, nil
}

// addOnline adds d to the four counters under k.
func addOnline(b *bolt.Bucket, k []byte, d [4]int64) error {
	v := make([]byte, 32)
	if old := b.Get(k); len(old) == 32 {
		copy(v, old)
	}
	for i := range d {
		binary.BigEndian.PutUint64(v[8*i:], binary.BigEndian.Uint64(v[8*i:])+uint64(d[i]))
	}
	return b.Put(k, v)
}

// findImpression is the impression a touch is credited to, and the item's
// position in it; ok is false when there is none. recent are the user's
// lists in the window, newest first (online_recent.go), for a touch
// without an id.
func findImpression(tx *bolt.Tx, t api.Touch, window time.Duration, recent []string) (api.Impression, int, bool, error) {
	b := tx.Bucket(bucketImps)
	if b == nil {
		return api.Impression{}, 0, false, nil
	}
	if t.RecommendationID != "" {
		recent = []string{t.RecommendationID}
	}
	for _, id := range recent {
		k, ok := impKey(id)
		if !ok {
			continue
		}
		v := b.Get(k)
		if v == nil {
			continue
		}
		imp, err := decodeImpression(k, v)
		if err != nil {
			return api.Impression{}, 0, false, err
		}
		if pos := record.Matches(imp, t, window); pos >= 0 {
			return imp, pos, true, nil
		}
	}
	return api.Impression{}, 0, false, nil
}

// Attribute credits touches to what was shown (api.OnlineStore). The
// lookups run in a read transaction; only a batch with credits to write
// takes a write transaction, which looks them up again.
func (s *Store) Attribute(ctx context.Context, touches []api.Touch, window time.Duration) ([]api.Attributed, error) {
	idx, err := s.recentIndex(ctx, window)
	if err != nil {
		return nil, err
	}
	recent := make([][]string, len(touches))
	for k, t := range touches {
		if t.RecommendationID == "" {
			recent[k] = idx.lookup(t.UserID, record.UnixNano(t.At.Add(-window)), record.UnixNano(t.At))
		}
	}
	found := false
	err = s.view(ctx, func(tx *bolt.Tx) error {
		for k, t := range touches {
			_, _, ok, err := findImpression(tx, t, window, recent[k])
			if err != nil || ok {
				found = ok
				return err
			}
		}
		return nil
	})
	if err != nil || !found {
		return nil, err
	}
	var out []api.Attributed
	err = s.update(ctx, func(tx *bolt.Tx) error {
		out = out[:0]
		ab, ob := tx.Bucket(bucketAttrib), tx.Bucket(bucketOnline)
		for k, t := range touches {
			imp, pos, ok, err := findImpression(tx, t, window, recent[k])
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
			key := binary.BigEndian.AppendUint16(append([]byte(imp.ID), 0), uint16(pos))
			var old byte
			if v := ab.Get(key); len(v) == 1 {
				old = v[0]
			}
			flags, d, a, ok := record.Credited(imp, pos, old, t.Conversion)
			if !ok {
				continue
			}
			if err := ab.Put(key, []byte{flags}); err != nil {
				return err
			}
			if err := addOnline(ob, onlineKey(api.OnlineCount{Day: record.OnlineDay(imp.At), Model: imp.Model,
				Experiment: imp.Experiment, Arm: imp.Arm, Placement: imp.Placement}), d); err != nil {
				return err
			}
			out = append(out, a)
		}
		return nil
	})
	return out, err
}

// OnlineCounts lists the counters of the days from..to (YYYY-MM-DD).
func (s *Store) OnlineCounts(ctx context.Context, from, to string) ([]api.OnlineCount, error) {
	var out []api.OnlineCount
	err := s.view(ctx, func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketOnline)
		if b == nil {
			return nil
		}
		lo, hi := strings.ReplaceAll(from, "-", ""), strings.ReplaceAll(to, "-", "")
		c := b.Cursor()
		for k, v := c.Seek([]byte(lo)); k != nil; k, v = c.Next() {
			if len(k) >= 8 && string(k[:8]) > hi {
				break
			}
			oc, err := decodeOnline(k, v)
			if err != nil {
				return err
			}
			out = append(out, oc)
		}
		return nil
	})
	return out, err
}

// CreateExperiment stores e with a fresh id, unless one is running.
func (s *Store) CreateExperiment(ctx context.Context, e api.Experiment) (api.Experiment, error) {
	err := s.update(ctx, func(tx *bolt.Tx) error {
		meta, b := tx.Bucket(bucketMeta), tx.Bucket(bucketExps)
		if run := meta.Get(keyRunningExperiment); run != nil {
			return record.RunningConflict(string(run))
		}
		seq, err := b.NextSequence()
		if err != nil {
			return err
		}
		e.ID, e.StoppedAt = fmt.Sprintf("x%06d", seq), time.Time{}
		v, err := record.EncodeExperiment(e)
		if err != nil {
			return err
		}
		if err := b.Put([]byte(e.ID), v); err != nil {
			return err
		}
		return meta.Put(keyRunningExperiment, []byte(e.ID))
	})
	return e, err
}

// Experiment reads one experiment.
func (s *Store) Experiment(ctx context.Context, id string) (api.Experiment, error) {
	var e api.Experiment
	err := s.view(ctx, func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketExps)
		var v []byte
		if b != nil {
			v = b.Get([]byte(id))
		}
		if v == nil {
			return notFound("experiment", id)
		}
		var err error
		e, err = record.DecodeExperiment(id, v)
		return err
	})
	return e, err
}

// Experiments lists every experiment, newest first.
func (s *Store) Experiments(ctx context.Context) ([]api.Experiment, error) {
	var out []api.Experiment
	err := s.view(ctx, func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketExps)
		if b == nil {
			return nil
		}
		c := b.Cursor()
		for k, v := c.Last(); k != nil; k, v = c.Prev() {
			e, err := record.DecodeExperiment(string(k), v)
			if err != nil {
				return err
			}
			out = append(out, e)
		}
		return nil
	})
	return out, err
}

// StopExperiment stops a running experiment.
func (s *Store) StopExperiment(ctx context.Context, id string, at time.Time) (api.Experiment, error) {
	var e api.Experiment
	err := s.update(ctx, func(tx *bolt.Tx) error {
		meta, b := tx.Bucket(bucketMeta), tx.Bucket(bucketExps)
		v := b.Get([]byte(id))
		if v == nil {
			return notFound("experiment", id)
		}
		var err error
		if e, err = record.DecodeExperiment(id, v); err != nil || !e.Running() {
			return err
		}
		e.StoppedAt = at.UTC()
		if v, err = record.EncodeExperiment(e); err != nil {
			return err
		}
		if err := b.Put([]byte(id), v); err != nil {
			return err
		}
		if bytes.Equal(meta.Get(keyRunningExperiment), []byte(id)) {
			return meta.Delete(keyRunningExperiment)
		}
		return nil
	})
	return e, err
}

var _ api.OnlineStore = (*Store)(nil)
