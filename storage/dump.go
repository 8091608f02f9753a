package storage

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"maps"
	"slices"
	"sort"
	"strings"

	bolt "go.etcd.io/bbolt"

	"recsys/api"
)

// A dump is a store's whole content as a stream of records in one fixed
// order, the same from either store: what `recsys migrate` copies, counts
// and checksums. Indices, times, counters and sequences are copied as they
// are, so the copy answers every read as the original does and its models
// still match its indices.

// DumpUser is a user record.
type DumpUser struct {
	Idx uint64
	ID  string
	T   Tally
}

// DumpItem is an item record with its popularity.
type DumpItem struct {
	Idx                        uint64
	ID                         string
	Features                   map[string]float64 `json:",omitempty"`
	Categories                 []string           `json:",omitempty"`
	Labels                     map[string]string  `json:",omitempty"`
	Hidden                     bool
	Created, Updated, Positive int64
}

// DumpPair is a pair record.
type DumpPair struct {
	User, Item uint64
	P          Pair
}

// DumpPairDay is the events of a pair on a day other than its first.
type DumpPairDay struct {
	User, Item uint64
	Day        string // YYYYMMDD
	Events     int64
}

// DumpDay is a per-day event counter.
type DumpDay struct {
	Day    string // YYYYMMDD
	Events int64
}

// DumpModel is a model version: its record and its sealed blob (SealBlob).
type DumpModel struct {
	Info   api.ModelInfo
	Sealed []byte
}

// DumpHead is what precedes the records: the counters (users, items,
// pairs, positives, events), the sequences (user_seq, item_seq, model_seq,
// job_seq, report_seq, experiment_seq: the last number given out) and the
// active model.
type DumpHead struct {
	Counters map[string]int64
	Active   string
}

// DumpSink takes a dump: Head first, then users by index, items by index,
// pairs by (user, item), pair days by (user, item, day), days, models by
// (name, version), jobs and reports by id, then the online records
// (dump_online.go): impressions by recommendation id (which is time
// order), attributions by (id, position), online counters by (day, model,
// experiment, arm) and experiments by id.
type DumpSink interface {
	Head(DumpHead) error
	User(DumpUser) error
	Item(DumpItem) error
	Pair(DumpPair) error
	PairDay(DumpPairDay) error
	Day(DumpDay) error
	Model(DumpModel) error
	Job(api.Job) error
	Report(api.Report) error
	Impression(api.Impression) error
	Attribution(DumpAttribution) error
	OnlineCount(api.OnlineCount) error
	Experiment(DumpExperiment) error
}

// Dumper is a store that can write out and take in a whole dump.
type Dumper interface {
	// Dump writes everything to sink from one consistent read.
	Dump(ctx context.Context, sink DumpSink) error
	// Restore fills the store, which must hold nothing (ErrNotEmpty), with
	// the dump fill writes to the sink it is given, in one transaction:
	// all of it or, when fill or a write fails, none.
	Restore(ctx context.Context, fill func(DumpSink) error) error
}

// SeqNames are the sequences of a dump head.
var SeqNames = []string{"user_seq", "item_seq", "model_seq", "job_seq", "report_seq", "experiment_seq"}

// CounterNames are the counters of a dump head.
var CounterNames = []string{counterUsers, counterItems, counterPairs, counterPositives, counterEvents}

// DumpKinds are the kinds of record of a dump after its head, in dump
// order: what DumpSum counts.
var DumpKinds = []string{"users", "items", "pairs", "pair_days", "days", "models", "jobs", "reports",
	"impressions", "attributions", "online_counts", "experiments"}

// DumpSum counts and checksums a dump as it passes to next (nil: nowhere):
// SHA-256 over each record's kind and JSON encoding, which is canonical
// (struct fields in order, map keys sorted, floats exact).
type DumpSum struct {
	next   DumpSink
	h      hash.Hash
	Counts map[string]int64
}

// NewDumpSum returns a DumpSum passing records on to next.
func NewDumpSum(next DumpSink) *DumpSum {
	return &DumpSum{next: next, h: sha256.New(), Counts: map[string]int64{}}
}

// Sum is the hex checksum of the records so far.
func (d *DumpSum) Sum() string { return hex.EncodeToString(d.h.Sum(nil)) }

// String lists the counts in dump order.
func (d *DumpSum) String() string {
	var parts []string
	for _, k := range DumpKinds {
		parts = append(parts, fmt.Sprintf("%d %s", d.Counts[k], k))
	}
	return strings.Join(parts, ", ")
}

func (d *DumpSum) add(kind string, v any, pass func() error) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	d.h.Write([]byte(kind))
	d.h.Write([]byte{'\n'})
	d.h.Write(b)
	d.h.Write([]byte{'\n'})
	d.Counts[kind]++
	if d.next == nil {
		return nil
	}
	return pass()
}

func (d *DumpSum) Head(h DumpHead) error {
	return d.add("head", h, func() error { return d.next.Head(h) })
}
func (d *DumpSum) User(u DumpUser) error {
	return d.add("users", u, func() error { return d.next.User(u) })
}
func (d *DumpSum) Item(it DumpItem) error {
	return d.add("items", it, func() error { return d.next.Item(it) })
}
func (d *DumpSum) Pair(p DumpPair) error {
	return d.add("pairs", p, func() error { return d.next.Pair(p) })
}
func (d *DumpSum) PairDay(p DumpPairDay) error {
	return d.add("pair_days", p, func() error { return d.next.PairDay(p) })
}
func (d *DumpSum) Day(x DumpDay) error {
	return d.add("days", x, func() error { return d.next.Day(x) })
}
func (d *DumpSum) Model(m DumpModel) error {
	return d.add("models", m, func() error { return d.next.Model(m) })
}
func (d *DumpSum) Job(j api.Job) error {
	return d.add("jobs", j, func() error { return d.next.Job(j) })
}
func (d *DumpSum) Report(r api.Report) error {
	return d.add("reports", r, func() error { return d.next.Report(r) })
}
func (d *DumpSum) Impression(imp api.Impression) error {
	return d.add("impressions", imp, func() error { return d.next.Impression(imp) })
}
func (d *DumpSum) Attribution(a DumpAttribution) error {
	return d.add("attributions", a, func() error { return d.next.Attribution(a) })
}
func (d *DumpSum) OnlineCount(c api.OnlineCount) error {
	return d.add("online_counts", c, func() error { return d.next.OnlineCount(c) })
}
func (d *DumpSum) Experiment(e DumpExperiment) error {
	return d.add("experiments", e, func() error { return d.next.Experiment(e) })
}

var _ Dumper = (*Store)(nil)

// Dump writes the whole store to sink from one read transaction.
func (s *Store) Dump(ctx context.Context, sink DumpSink) error {
	// Every acknowledged event first: the unapplied tail of the event log.
	if err := s.syncTail(ctx); err != nil {
		return err
	}
	if err := s.refuseUnappliedTail(); err != nil {
		return err
	}
	return s.view(ctx, func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		head := DumpHead{Counters: map[string]int64{}, Active: string(meta.Get(keyActiveModel))}
		for _, n := range CounterNames {
			head.Counters[n] = counter(meta, n)
		}
		for k, b := range seqBuckets(tx) {
			if b != nil {
				head.Counters[SeqNames[k]] = int64(b.Sequence())
			} else {
				head.Counters[SeqNames[k]] = 0
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
			return sink.User(DumpUser{Idx: getU64(k), ID: string(id), T: Tally{Created: r.created, LastSeen: r.lastSeen,
				Items: r.items, Positives: r.positives, Events: r.events}})
		}); err != nil {
			return err
		}
		items, pop := tx.Bucket(bucketItems), tx.Bucket(bucketItemPop)
		if err := tx.Bucket(bucketItemIDs).ForEach(func(k, id []byte) error {
			r, err := decodeItem(items.Get(id))
			if err != nil {
				return fmt.Errorf("item %q: %w", id, err)
			}
			return sink.Item(DumpItem{Idx: getU64(k), ID: string(id), Features: r.Features, Categories: r.Categories,
				Labels: r.Labels, Hidden: r.Hidden, Created: r.Created, Updated: r.Updated, Positive: int64(getU64(pop.Get(k)))})
		}); err != nil {
			return err
		}
		if err := tx.Bucket(bucketPairs).ForEach(func(k, v []byte) error {
			p, err := decodePair(v)
			if err != nil {
				return err
			}
			return sink.Pair(DumpPair{User: binary.BigEndian.Uint64(k), Item: binary.BigEndian.Uint64(k[8:]),
				P: Pair{Count: p.count, First: p.first, Last: p.last, Value: p.value, Flags: p.flags, LastType: p.lastType}})
		}); err != nil {
			return err
		}
		if err := tx.Bucket(bucketPairDays).ForEach(func(k, v []byte) error {
			if len(k) != 24 {
				return fmt.Errorf("pair_days key of %d bytes", len(k))
			}
			return sink.PairDay(DumpPairDay{User: binary.BigEndian.Uint64(k), Item: binary.BigEndian.Uint64(k[8:]),
				Day: string(k[16:]), Events: int64(getU64(v))})
		}); err != nil {
			return err
		}
		prefix := []byte(dayPrefix)
		c := meta.Cursor()
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			if err := sink.Day(DumpDay{Day: string(k[len(prefix):]), Events: int64(getU64(v))}); err != nil {
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
func dumpModels(b *bolt.Bucket, sink DumpSink) error {
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
		if err := sink.Model(DumpModel{Info: info, Sealed: blobs[key]}); err != nil {
			return err
		}
	}
	return nil
}

// Restore fills an empty store with a dump, in one write transaction.
func (s *Store) Restore(ctx context.Context, fill func(DumpSink) error) error {
	// Exclusive: the event log's tail is applied first, so "empty" means
	// no acknowledged event either, and none is appended meanwhile.
	restore := func(tx *bolt.Tx) error {
		for _, name := range [][]byte{bucketUsers, bucketItems, bucketModels, bucketJobs, bucketReports,
			bucketImps, bucketAttrib, bucketOnline, bucketExps} {
			if k, _ := tx.Bucket(name).Cursor().First(); k != nil {
				return ErrNotEmpty
			}
		}
		for _, b := range seqBuckets(tx) {
			if b.Sequence() != 0 {
				return ErrNotEmpty
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

func (b *boltSink) Head(h DumpHead) error {
	for _, n := range CounterNames {
		if err := addCounter(b.w.meta, n, h.Counters[n]); err != nil {
			return err
		}
	}
	for k, bk := range seqBuckets(b.tx) {
		if err := bk.SetSequence(uint64(max(h.Counters[SeqNames[k]], 0))); err != nil {
			return err
		}
	}
	if h.Active == "" {
		return nil
	}
	return b.w.meta.Put(keyActiveModel, []byte(h.Active))
}

func (b *boltSink) User(u DumpUser) error {
	r := userRecord{idx: u.Idx, created: u.T.Created, lastSeen: u.T.LastSeen, items: u.T.Items,
		positives: u.T.Positives, events: u.T.Events}
	b.putLater(b.w.users, []byte(u.ID), r.encode())
	b.putLater(b.tx.Bucket(bucketUserOrder), OrderKey(u.ID), nil)
	return b.w.userIDs.Put(u64(u.Idx), []byte(u.ID))
}

func (b *boltSink) Item(it DumpItem) error {
	rec, err := itemRecord{Idx: it.Idx, Features: it.Features, Categories: it.Categories, Labels: it.Labels,
		Hidden: it.Hidden, Created: it.Created, Updated: it.Updated}.encode()
	if err != nil {
		return err
	}
	b.putLater(b.w.items, []byte(it.ID), rec)
	b.putLater(b.tx.Bucket(bucketItemOrder), OrderKey(it.ID), nil)
	if err := b.w.itemID.Put(u64(it.Idx), []byte(it.ID)); err != nil {
		return err
	}
	return addItemCount(b.w.pop, it.Idx, it.Positive)
}

func (b *boltSink) Pair(p DumpPair) error {
	r := pairRecord{count: p.P.Count, first: p.P.First, last: p.P.Last, value: p.P.Value, flags: p.P.Flags, lastType: p.P.LastType}
	if err := b.w.pairs.Put(pairKey(p.User, p.Item), r.encode()); err != nil {
		return err
	}
	b.w.pairsDelta[p.Item]++
	if b.filter != nil {
		b.filter.add(p.User, p.Item)
	}
	return nil
}

func (b *boltSink) PairDay(p DumpPairDay) error {
	return b.w.pairDays.Put([]byte(pairDayKey(pairKey(p.User, p.Item), p.Day)), u64(uint64(p.Events)))
}

func (b *boltSink) Day(d DumpDay) error { return addDay(b.w.meta, d.Day, d.Events) }

func (b *boltSink) Model(m DumpModel) error {
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
