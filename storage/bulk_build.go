package storage

import (
	"bytes"
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"

	bolt "go.etcd.io/bbolt"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/storage/record"
)

// bulkEvent is one event held in memory by the bulk loader: 32 bytes, so
// 20 million take 640 MB. Its position in the slice is its arrival order.
type bulkEvent struct {
	ts    int64
	value float64
	user  uint32 // dense index, from 1
	item  uint32 // dense index, from 1
	typ   uint16 // index into bulkBuilder.types
	bits  uint8
}

const (
	bulkHasValue = 1 << iota
	bulkPositive
	bulkNegative
)

type bulkUser struct {
	id  string
	rec userRecord
}

type bulkItem struct {
	id  string
	rec itemRecord
}

// bulkBuilder collects a bulk load and writes it.
type bulkBuilder struct {
	policy  api.Policy
	now     int64
	userIdx map[string]uint32
	users   []bulkUser // by dense index − 1
	itemIdx map[string]uint32
	items   []bulkItem // by dense index − 1
	typeIdx map[string]uint16
	types   []string
	events  [][]bulkEvent // in chunks of bulkChunk, so that growing never copies
	nEvents int
	// itemRecords is the number of items given by item records, all
	// before any event: the others were created by an event.
	itemRecords int
	counts      api.Counts
}

func newBulkBuilder(policy api.Policy, now int64) *bulkBuilder {
	return &bulkBuilder{policy: policy, now: now, userIdx: map[string]uint32{},
		itemIdx: map[string]uint32{}, typeIdx: map[string]uint16{}}
}

// putItem stores an item record as PutItems does: a new item takes the
// next index; a repeated one replaces the record but keeps its index and
// creation time.
func (b *bulkBuilder) putItem(it api.Item) {
	rec := itemRecord{Features: it.Features, Categories: it.Categories, Labels: it.Labels,
		Hidden: it.Hidden, Created: b.now, Updated: b.now}
	if k, ok := b.itemIdx[it.ID]; ok {
		old := b.items[k-1].rec
		rec.Idx, rec.Created = old.Idx, old.Created
		b.items[k-1].rec = rec
		return
	}
	rec.Idx = uint64(len(b.items) + 1)
	b.items = append(b.items, bulkItem{id: it.ID, rec: rec})
	b.itemIdx[it.ID] = uint32(rec.Idx)
}

// add takes one event as AddInteractions does: judged by the policy,
// stamped with the server time when it has none, its user and item created
// at first sight.
func (b *bulkBuilder) add(ev api.Interaction) error {
	positive, negative, err := b.policy.Judge(ev)
	if err != nil {
		return err
	}
	if len(b.users) == math.MaxUint32-1 || len(b.items) == math.MaxUint32-1 {
		return fmt.Errorf("a bulk load takes at most %d users and items", uint32(math.MaxUint32-1))
	}
	ts := record.UnixNano(ev.Timestamp)
	if ts == 0 {
		ts = b.now
	}
	u, ok := b.userIdx[ev.UserID]
	if !ok {
		u = uint32(len(b.users) + 1)
		b.users = append(b.users, bulkUser{id: ev.UserID, rec: userRecord{idx: uint64(u), User: record.User{Created: ts}}})
		b.userIdx[ev.UserID] = u
	}
	i, ok := b.itemIdx[ev.ItemID]
	if !ok {
		i = uint32(len(b.items) + 1)
		b.items = append(b.items, bulkItem{id: ev.ItemID, rec: itemRecord{Idx: uint64(i), Created: b.now, Updated: b.now}})
		b.itemIdx[ev.ItemID] = i
	}
	t, ok := b.typeIdx[ev.Type]
	if !ok {
		if len(b.types) > math.MaxUint16 {
			return fmt.Errorf("a bulk load takes at most %d event types", math.MaxUint16+1)
		}
		t = uint16(len(b.types))
		b.types = append(b.types, ev.Type)
		b.typeIdx[ev.Type] = t
	}
	e := bulkEvent{ts: ts, value: ev.Value, user: u, item: i, typ: t}
	if ev.HasValue {
		e.bits |= bulkHasValue
	}
	if positive {
		e.bits |= bulkPositive
	}
	if negative {
		e.bits |= bulkNegative
	}
	if len(b.events) == 0 || len(b.events[len(b.events)-1]) == bulkChunk {
		b.events = append(b.events, make([]bulkEvent, 0, bulkChunk))
	}
	last := &b.events[len(b.events)-1]
	*last = append(*last, e)
	b.nEvents++
	return nil
}

// mapSize is a generous bound on the size of the database file: about
// 100 bytes per event and per item record are written (at 20M events the
// file has 2.1 GB), so 256 per event and 4 KiB per item leave room.
func (b *bulkBuilder) mapSize() int {
	return 64<<20 + 256*b.nEvents + 4096*len(b.items)
}

// bulkChunk is the number of events per chunk (32 MB).
const bulkChunk = 1 << 20

// sortByPair returns the events ordered by (user, item) and, within a
// pair, by arrival: two stable counting sorts, by item and then by user.
// It drops the chunks once they are copied.
func (b *bulkBuilder) sortByPair() []bulkEvent {
	tmp := make([]bulkEvent, b.nEvents)
	countingSort(tmp, b.events, len(b.items), func(e *bulkEvent) uint32 { return e.item })
	b.events = nil
	evs := make([]bulkEvent, len(tmp))
	countingSort(evs, [][]bulkEvent{tmp}, len(b.users), func(e *bulkEvent) uint32 { return e.user })
	return evs
}

// countingSort copies the chunks of src into dst ordered by key (0..n),
// stably.
func countingSort[T any](dst []T, src [][]T, n int, key func(*T) uint32) {
	next := make([]int, n+2)
	for _, c := range src {
		for k := range c {
			next[key(&c[k])+1]++
		}
	}
	for k := 1; k < len(next); k++ {
		next[k] += next[k-1]
	}
	for _, c := range src {
		for k := range c {
			x := key(&c[k])
			dst[next[x]] = c[k]
			next[x]++
		}
	}
}

// write stores everything in the empty database db, bucket by bucket in
// key order.
func (b *bulkBuilder) write(db *bolt.DB, progress func(string)) error {
	w, err := newBulkWriter(db)
	if err != nil {
		return err
	}
	defer w.rollback()
	progress(fmt.Sprintf("sorting %d events by pair", b.nEvents))
	evs := b.sortByPair()
	progress("writing pairs")
	pop := make([]int64, len(b.items)+1)
	pairs := make([]int64, len(b.items)+1) // by item
	dayEvents := map[int64]int64{}
	days := dayNames{}
	var later []int64 // the pair's events on days after its first one
	for lo := 0; lo < len(evs); {
		user, item := evs[lo].user, evs[lo].item
		hi := lo + 1
		for hi < len(evs) && evs[hi].user == user && evs[hi].item == item {
			hi++
		}
		u := &b.users[user-1].rec
		var p record.Pair
		later = later[:0]
		firstDay := int64(0)
		for k := lo; k < hi; k++ {
			e := &evs[k]
			d := record.Fold(&u.User, &p, k == lo, record.Event{TS: e.ts, Type: b.types[e.typ], Value: e.value,
				HasValue: e.bits&bulkHasValue != 0, Positive: e.bits&bulkPositive != 0, Negative: e.bits&bulkNegative != 0})
			pop[item] += d
			b.counts.Positives += d
			day := dayNumber(e.ts)
			dayEvents[day]++
			if k == lo {
				firstDay = day
			} else if day != firstDay {
				later = append(later, day)
			}
		}
		key := pairKey(uint64(user), uint64(item))
		if err := w.put(bucketPairs, key, encodePair(p)); err != nil {
			return err
		}
		// pair_days holds, per later day, the pair's events on it.
		slices.Sort(later)
		for k := 0; k < len(later); {
			n := 1
			for k+n < len(later) && later[k+n] == later[k] {
				n++
			}
			if err := w.put(bucketPairDays, []byte(pairDayKey(key, days.name(later[k]))), u64(uint64(n))); err != nil {
				return err
			}
			k += n
		}
		pairs[item]++
		b.counts.Interactions++
		lo = hi
	}
	b.counts.Events = int64(len(evs))
	evs = nil

	progress("writing users and items")
	if err := b.writeUsers(w); err != nil {
		return err
	}
	if err := b.writeItems(w, pop, pairs); err != nil {
		return err
	}
	if err := b.writeMeta(w, dayEvents, days); err != nil {
		return err
	}
	return w.commit()
}

// orderByID is 0..n-1 sorted by id: the order of the id-keyed buckets.
func orderByID(n int, id func(k uint32) string) []uint32 {
	byID := make([]uint32, n)
	for k := range byID {
		byID[k] = uint32(k)
	}
	slices.SortFunc(byID, func(x, y uint32) int { return cmp.Compare(id(x), id(y)) })
	return byID
}

func (b *bulkBuilder) writeUsers(w *bulkWriter) error {
	for k := range b.users {
		if err := w.put(bucketUserIDs, u64(uint64(k+1)), []byte(b.users[k].id)); err != nil {
			return err
		}
	}
	for _, k := range orderByID(len(b.users), func(k uint32) string { return b.users[k].id }) {
		if err := w.put(bucketUsers, []byte(b.users[k].id), b.users[k].rec.encode()); err != nil {
			return err
		}
	}
	if err := writeOrder(w, bucketUserOrder, len(b.users), func(k int) string { return b.users[k].id }); err != nil {
		return err
	}
	b.counts.Users = int64(len(b.users))
	return w.bucket(bucketUserIDs).SetSequence(uint64(len(b.users)))
}

func (b *bulkBuilder) writeItems(w *bulkWriter, pop, pairs []int64) error {
	for k := range b.items {
		if err := w.put(bucketItemIDs, u64(uint64(k+1)), []byte(b.items[k].id)); err != nil {
			return err
		}
	}
	for _, counts := range []struct {
		bucket []byte
		n      []int64
	}{{bucketItemPop, pop}, {bucketItemPairs, pairs}} {
		for item := 1; item < len(counts.n); item++ {
			if counts.n[item] > 0 {
				if err := w.put(counts.bucket, u64(uint64(item)), u64(uint64(counts.n[item]))); err != nil {
					return err
				}
			}
		}
	}
	for _, k := range orderByID(len(b.items), func(k uint32) string { return b.items[k].id }) {
		rec, err := b.items[k].rec.encode()
		if err != nil {
			return err
		}
		if err := w.put(bucketItems, []byte(b.items[k].id), rec); err != nil {
			return err
		}
	}
	if err := writeOrder(w, bucketItemOrder, len(b.items), func(k int) string { return b.items[k].id }); err != nil {
		return err
	}
	b.counts.Items = int64(len(b.items))
	return w.bucket(bucketItemIDs).SetSequence(uint64(len(b.items)))
}

// writeOrder writes the OrderKeys of n ids to an order bucket, sorted.
func writeOrder(w *bulkWriter, bucket []byte, n int, id func(k int) string) error {
	keys := make([][]byte, n)
	for k := range keys {
		keys[k] = record.OrderKey(id(k))
	}
	slices.SortFunc(keys, bytes.Compare)
	for _, k := range keys {
		if err := w.put(bucket, k, nil); err != nil {
			return err
		}
	}
	return nil
}

// writeMeta writes the counters (those above zero, as addCounter leaves
// them) and the per-day event counters.
func (b *bulkBuilder) writeMeta(w *bulkWriter, dayEvents map[int64]int64, days dayNames) error {
	entries := map[string]int64{"c/" + counterUsers: b.counts.Users, "c/" + counterItems: b.counts.Items,
		"c/" + counterPairs: b.counts.Interactions, "c/" + counterPositives: b.counts.Positives,
		"c/" + counterEvents: b.counts.Events}
	for day, n := range dayEvents {
		entries[dayPrefix+days.name(day)] = n
	}
	for _, key := range slices.Sorted(maps.Keys(entries)) {
		if v := entries[key]; v > 0 {
			if err := w.put(bucketMeta, []byte(key), u64(uint64(v))); err != nil {
				return err
			}
		}
	}
	return nil
}

const nanosPerDay = 24 * 3600 * 1e9

// dayNumber numbers the UTC days, so that equal numbers are equal
// record.DayOf names and their order is the names' order. record.DayOf(0)
// is year 1 (0 means no time), numbered below every real day.
func dayNumber(ts int64) int64 {
	if ts == 0 {
		return math.MinInt64
	}
	d := ts / nanosPerDay
	if ts%nanosPerDay < 0 {
		d--
	}
	return d
}

// dayNames caches record.DayOf by day number.
type dayNames map[int64]string

func (d dayNames) name(day int64) string {
	if s, ok := d[day]; ok {
		return s
	}
	ts := int64(0)
	if day != math.MinInt64 {
		ts = day * nanosPerDay
		if ts == 0 {
			ts = 1 // the first nanosecond of 1970-01-01 would read as no time
		}
	}
	s := record.DayOf(ts)
	d[day] = s
	return s
}

// bulkTxPuts is the number of keys written per transaction of a bulk load.
// bbolt holds a transaction's new keys in one node per bucket, searched and
// grown at each Put: 2^17 was fastest of 2^15..2^19 (BenchmarkBulkLoad:
// 2^19 took 8% longer), and commits without fsync are cheap.
const bulkTxPuts = 1 << 17

// bulkWriter appends keys in large transactions. bbolt keeps the key and
// value slices of a Put until the commit, so callers pass fresh slices.
type bulkWriter struct {
	db      *bolt.DB
	tx      *bolt.Tx
	buckets map[string]*bolt.Bucket
	puts    int
}

func newBulkWriter(db *bolt.DB) (*bulkWriter, error) {
	w := &bulkWriter{db: db}
	return w, w.begin()
}

func (w *bulkWriter) begin() error {
	tx, err := w.db.Begin(true)
	if err != nil {
		return err
	}
	w.tx, w.buckets, w.puts = tx, map[string]*bolt.Bucket{}, 0
	return nil
}

// bucket returns a bucket of the current transaction, set to fill its
// pages completely: every bucket is written in key order, so a page is
// never split by a later insert during the load.
func (w *bulkWriter) bucket(name []byte) *bolt.Bucket {
	b, ok := w.buckets[string(name)]
	if !ok {
		b = w.tx.Bucket(name)
		b.FillPercent = 1.0
		w.buckets[string(name)] = b
	}
	return b
}

func (w *bulkWriter) put(bucket, k, v []byte) error {
	if w.puts == bulkTxPuts {
		if err := w.commit(); err != nil {
			return err
		}
		if err := w.begin(); err != nil {
			return err
		}
	}
	w.puts++
	return w.bucket(bucket).Put(k, v)
}

func (w *bulkWriter) commit() error {
	tx := w.tx
	w.tx = nil
	return tx.Commit()
}

func (w *bulkWriter) rollback() {
	if w.tx != nil {
		_ = w.tx.Rollback()
	}
}
