package storage

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	bolt "go.etcd.io/bbolt"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/storage/dump"
	"github.com/recsys-engine/recsys/storage/record"
)

// The bbolt store's side of a dump (storage/dump): Dump reads every bucket
// in the dump's order, Restore writes a dump into an empty file.

var _ dump.Dumper = (*Store)(nil)

// Dump writes the whole store to sink from one read transaction.
func (s *Store) Dump(ctx context.Context, sink dump.Sink) error {
	// Every acknowledged event first: the unapplied tail of the event log.
	if err := s.syncTail(ctx); err != nil {
		return err
	}
	if err := s.refuseUnappliedTail(); err != nil {
		return err
	}
	return s.view(ctx, func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		head := dump.Head{Counters: map[string]int64{}, Active: string(meta.Get(keyActiveModel))}
		for _, n := range dump.CounterNames {
			head.Counters[n] = counter(meta, n)
		}
		for k, b := range seqBuckets(tx) {
			if b != nil {
				head.Counters[dump.SeqNames[k]] = int64(b.Sequence())
			} else {
				head.Counters[dump.SeqNames[k]] = 0
			}
		}
		if err := sink.Head(head); err != nil {
			return err
		}
		users := tx.Bucket(bucketUsers)
		if err := tx.Bucket(bucketUserIDs).ForEach(func(k, id []byte) error {
			r, err := decodeUser(users.Get(id))
			if err != nil {
				return fmt.Errorf("user %q: %w", id, err)
			}
			return sink.User(dump.User{Idx: getU64(k), ID: string(id), T: r.User})
		}); err != nil {
			return err
		}
		items, pop := tx.Bucket(bucketItems), tx.Bucket(bucketItemPop)
		if err := tx.Bucket(bucketItemIDs).ForEach(func(k, id []byte) error {
			r, err := decodeItem(items.Get(id))
			if err != nil {
				return fmt.Errorf("item %q: %w", id, err)
			}
			return sink.Item(dump.Item{Idx: getU64(k), ID: string(id), Features: r.Features, Categories: r.Categories,
				Labels: r.Labels, Hidden: r.Hidden, Created: r.Created, Updated: r.Updated, Positive: int64(getU64(pop.Get(k)))})
		}); err != nil {
			return err
		}
		if err := tx.Bucket(bucketPairs).ForEach(func(k, v []byte) error {
			p, err := decodePair(v)
			if err != nil {
				return err
			}
			return sink.Pair(dump.Pair{User: binary.BigEndian.Uint64(k), Item: binary.BigEndian.Uint64(k[8:]), P: p})
		}); err != nil {
			return err
		}
		if err := tx.Bucket(bucketPairDays).ForEach(func(k, v []byte) error {
			if len(k) != 24 {
				return fmt.Errorf("pair_days key of %d bytes", len(k))
			}
			return sink.PairDay(dump.PairDay{User: binary.BigEndian.Uint64(k), Item: binary.BigEndian.Uint64(k[8:]),
				Day: string(k[16:]), Events: int64(getU64(v))})
		}); err != nil {
			return err
		}
		prefix := []byte(dayPrefix)
		c := meta.Cursor()
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			if err := sink.Day(dump.Day{Day: string(k[len(prefix):]), Events: int64(getU64(v))}); err != nil {
				return err
			}
		}
		if err := dumpModels(tx.Bucket(bucketModels), sink); err != nil {
			return err
		}
		if err := tx.Bucket(bucketJobs).ForEach(func(k, v []byte) error {
			var j api.Job
			if err := json.Unmarshal(v, &j); err != nil {
				return fmt.Errorf("job %q: %w", k, err)
			}
			return sink.Job(j)
		}); err != nil {
			return err
		}
		if err := tx.Bucket(bucketReports).ForEach(func(k, v []byte) error {
			var r api.Report
			if err := json.Unmarshal(v, &r); err != nil {
				return fmt.Errorf("report %q: %w", k, err)
			}
			return sink.Report(r)
		}); err != nil {
			return err
		}
		return dumpOnline(tx, sink)
	})
}

// seqBuckets are the buckets whose sequences are the dump's SeqNames. The
// experiments bucket is nil in a file opened read-only that predates it.
func seqBuckets(tx *bolt.Tx) []*bolt.Bucket {
	return []*bolt.Bucket{tx.Bucket(bucketUserIDs), tx.Bucket(bucketItemIDs), tx.Bucket(bucketModels),
		tx.Bucket(bucketJobs), tx.Bucket(bucketReports), tx.Bucket(bucketExps)}
}

// dumpModels writes the model versions in (name, version) order; a
// version's blob key sorts just before its info key.
func dumpModels(b *bolt.Bucket, sink dump.Sink) error {
	type version struct{ name, version string }
	var order []version
	blobs := map[version][]byte{}
	infos := map[version][]byte{}
	err := b.ForEach(func(k, v []byte) error {
		parts := strings.Split(string(k), "\x00")
		switch {
		case len(parts) == 2:
			key := version{parts[0], parts[1]}
			order = append(order, key)
			blobs[key] = v
		case len(parts) == 3 && parts[2] == "info":
			infos[version{parts[0], parts[1]}] = v
		}
		return nil
	})
	if err != nil {
		return err
	}
	sort.Slice(order, func(a, c int) bool {
		if order[a].name != order[c].name {
			return order[a].name < order[c].name
		}
		return order[a].version < order[c].version
	})
	for _, key := range order {
		var info api.ModelInfo
		if err := json.Unmarshal(infos[key], &info); err != nil {
			return fmt.Errorf("model %s %s: %w", key.name, key.version, err)
		}
		info.Active = false
		if err := sink.Model(dump.Model{Info: info, Sealed: blobs[key]}); err != nil {
			return err
		}
	}
	return nil
}

// Restore fills an empty store with a dump, in one write transaction.
func (s *Store) Restore(ctx context.Context, fill func(dump.Sink) error) error {
	// Exclusive: the event log's tail is applied first, so "empty" means
	// no acknowledged event either, and none is appended meanwhile.
	restore := func(tx *bolt.Tx) error {
		for _, name := range [][]byte{bucketUsers, bucketItems, bucketModels, bucketJobs, bucketReports,
			bucketImps, bucketAttrib, bucketOnline, bucketExps, bucketRules, bucketPlaces} {
			if k, _ := tx.Bucket(name).Cursor().First(); k != nil {
				return dump.ErrNotEmpty
			}
		}
		for _, b := range seqBuckets(tx) {
			if b.Sequence() != 0 {
				return dump.ErrNotEmpty
			}
		}
		if s.log != nil {
			s.storedItems = nil // under s.mu (exclusive)
		}
		sink := &boltSink{tx: tx, w: newWriter(tx), filter: s.filter}
		if err := fill(sink); err != nil {
			return err
		}
		if err := sink.finish(); err != nil {
			return err
		}
		// Ingest allocates item indices after the restored ones.
		if s.log != nil {
			s.nextItem = max(s.nextItem, tx.Bucket(bucketItemIDs).Sequence()+1)
		}
		return nil
	}
	err := s.exclusive(ctx, func() error {
		if err := s.update(ctx, restore); err != nil {
			return err
		}
		s.growFilter() // still exclusive: a restore of many pairs outgrows the table
		return nil
	})
	if err == nil {
		s.itemsVersion.Add(1)
		s.eventsVersion.Add(1)
		s.forgetRecent() // rebuilt from the restored impressions at its next use
	}
	return err
}

// boltSink writes dump records into a write transaction. The dump's order
// is the order of the index → id buckets and of pairs, not that of the
// users and items buckets: their entries wait in later and go
// in sorted at the end, since bbolt inserts out of key order within one
// transaction in quadratic time (every insert moves the rest of an
// unsplit node).
type boltSink struct {
	tx     *bolt.Tx
	w      *writer
	filter *pairFilter // the store's, which must hold every pair written
	later  map[*bolt.Bucket][]keyValue
}

type keyValue struct{ k, v []byte }

func (b *boltSink) putLater(bk *bolt.Bucket, k, v []byte) {
	if b.later == nil {
		b.later = map[*bolt.Bucket][]keyValue{}
	}
	b.later[bk] = append(b.later[bk], keyValue{k, v})
}

// finish writes the entries that waited, each bucket's in key order, and
// the items' pair counts.
func (b *boltSink) finish() error {
	for _, item := range slices.Sorted(maps.Keys(b.w.pairsDelta)) {
		if err := addItemCount(b.w.itemPairs, item, b.w.pairsDelta[item]); err != nil {
			return err
		}
	}
	for bk, kvs := range b.later {
		sort.Slice(kvs, func(x, y int) bool { return bytes.Compare(kvs[x].k, kvs[y].k) < 0 })
		for _, kv := range kvs {
			if err := bk.Put(kv.k, kv.v); err != nil {
				return err
			}
		}
	}
	return nil
}

func (b *boltSink) Head(h dump.Head) error {
	for _, n := range dump.CounterNames {
		if err := addCounter(b.w.meta, n, h.Counters[n]); err != nil {
			return err
		}
	}
	for k, bk := range seqBuckets(b.tx) {
		if err := bk.SetSequence(uint64(max(h.Counters[dump.SeqNames[k]], 0))); err != nil {
			return err
		}
	}
	if h.Active == "" {
		return nil
	}
	return b.w.meta.Put(keyActiveModel, []byte(h.Active))
}

func (b *boltSink) User(u dump.User) error {
	r := userRecord{idx: u.Idx, User: u.T}
	b.putLater(b.w.users, []byte(u.ID), r.encode())
	b.putLater(b.tx.Bucket(bucketUserOrder), record.OrderKey(u.ID), nil)
	return b.w.userIDs.Put(u64(u.Idx), []byte(u.ID))
}

func (b *boltSink) Item(it dump.Item) error {
	rec, err := itemRecord{Idx: it.Idx, Features: it.Features, Categories: it.Categories, Labels: it.Labels,
		Hidden: it.Hidden, Created: it.Created, Updated: it.Updated}.encode()
	if err != nil {
		return err
	}
	b.putLater(b.w.items, []byte(it.ID), rec)
	b.putLater(b.tx.Bucket(bucketItemOrder), record.OrderKey(it.ID), nil)
	if err := b.w.itemID.Put(u64(it.Idx), []byte(it.ID)); err != nil {
		return err
	}
	return addItemCount(b.w.pop, it.Idx, it.Positive)
}

func (b *boltSink) Pair(p dump.Pair) error {
	if err := b.w.pairs.Put(pairKey(p.User, p.Item), encodePair(p.P)); err != nil {
		return err
	}
	b.w.pairsDelta[p.Item]++
	if b.filter != nil {
		b.filter.add(p.User, p.Item)
	}
	return nil
}

func (b *boltSink) PairDay(p dump.PairDay) error {
	return b.w.pairDays.Put([]byte(pairDayKey(pairKey(p.User, p.Item), p.Day)), u64(uint64(p.Events)))
}

func (b *boltSink) Day(d dump.Day) error { return addDay(b.w.meta, d.Day, d.Events) }

func (b *boltSink) Model(m dump.Model) error {
	m.Info.Active = false
	info, err := json.Marshal(m.Info)
	if err != nil {
		return err
	}
	models := b.tx.Bucket(bucketModels)
	if err := models.Put(modelKey(m.Info.Name, m.Info.Version), m.Sealed); err != nil {
		return err
	}
	return models.Put(modelInfoKey(m.Info.Name, m.Info.Version), info)
}

func (b *boltSink) Job(j api.Job) error {
	v, err := json.Marshal(j)
	if err != nil {
		return err
	}
	return b.tx.Bucket(bucketJobs).Put([]byte(j.ID), v)
}

func (b *boltSink) Report(r api.Report) error {
	v, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return b.tx.Bucket(bucketReports).Put([]byte(r.ID), v)
}
