package storage

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"maps"
	"math"
	"slices"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/storage/record"
)

// AddInteractions stores a batch of events: all or nothing. Unknown users
// and items are created. It returns the number of events stored once they
// are durable: in the event log (fsync), or in bbolt for a direct store.
func (s *Store) AddInteractions(ctx context.Context, evs []api.Interaction) (int, error) {
	js, err := record.Judge(s.policy, evs)
	if err != nil {
		return 0, err
	}
	now := s.now().UnixNano()
	if s.readOnly {
		return 0, s.writeErr(bolterrors.ErrDatabaseReadOnly)
	}
	if s.log != nil {
		return s.appendEvents(ctx, evs, js, now)
	}
	return s.addDirect(ctx, evs, js, now)
}

// addDirect folds a batch into bbolt in one transaction: the write path
// without the event log.
func (s *Store) addDirect(ctx context.Context, evs []api.Interaction, js []record.Verdict, now int64) (int, error) {
	// db.Batch coalesces concurrent batches into one transaction and one
	// fsync. The function only touches tx and its own locals, so bbolt may
	// safely run it again alone if another function in the batch fails.
	err := s.batch(ctx, func(tx *bolt.Tx) error {
		w := newWriter(tx)
		for k, ev := range evs {
			ts := record.UnixNano(ev.Timestamp)
			if ts == 0 {
				ts = now
			}
			u, err := w.user(ev.UserID, ts)
			if err != nil {
				return err
			}
			i, _, err := w.itemIndex(ev.ItemID, now)
			if err != nil {
				return err
			}
			if err := w.event(u, i, ev, ts, js[k]); err != nil {
				return err
			}
		}
		return w.flush()
	})
	if err != nil {
		return 0, err
	}
	// Items created by an event carry no catalogue data, so they only
	// count as an interaction change: caches pick them up within their TTL.
	s.eventsVersion.Add(1)
	return len(evs), nil
}

// writer batches the record updates of one write transaction, so a user
// seen many times in a batch is decoded and encoded once.
type writer struct {
	tx                                  *bolt.Tx
	meta, users, userIDs, items, itemID *bolt.Bucket
	pop, pairs, itemPairs, pairDays     *bolt.Bucket
	userCache                           map[string]*userRecord
	popDelta                            map[uint64]int64
	pairsDelta                          map[uint64]int64 // item_pairs, by item
	counters                            map[string]int64
	days                                map[string]int64
	pairDayDelta                        map[string]int64 // by pairDayKey
	// newUsers and newItems are the ids created in the transaction, put
	// in the order buckets at the flush.
	newUsers, newItems []string
}

func newWriter(tx *bolt.Tx) *writer {
	return &writer{tx: tx,
		meta: tx.Bucket(bucketMeta), users: tx.Bucket(bucketUsers), userIDs: tx.Bucket(bucketUserIDs),
		items: tx.Bucket(bucketItems), itemID: tx.Bucket(bucketItemIDs), pop: tx.Bucket(bucketItemPop),
		pairs: tx.Bucket(bucketPairs), itemPairs: tx.Bucket(bucketItemPairs), pairDays: tx.Bucket(bucketPairDays),
		userCache: map[string]*userRecord{}, popDelta: map[uint64]int64{}, pairsDelta: map[uint64]int64{},
		counters: map[string]int64{}, days: map[string]int64{}, pairDayDelta: map[string]int64{}}
}

// user returns the cached record of id, creating the user if needed.
func (w *writer) user(id string, ts int64) (*userRecord, error) {
	if r, ok := w.userCache[id]; ok {
		return r, nil
	}
	var r userRecord
	if b := w.users.Get([]byte(id)); b != nil {
		var err error
		if r, err = decodeUser(b); err != nil {
			return nil, err
		}
	} else {
		idx, err := w.userIDs.NextSequence()
		if err != nil {
			return nil, err
		}
		r = userRecord{idx: idx, User: record.User{Created: ts}}
		if err := w.userIDs.Put(u64(idx), []byte(id)); err != nil {
			return nil, err
		}
		w.newUsers = append(w.newUsers, id)
		w.counters[counterUsers]++
	}
	w.userCache[id] = &r
	return &r, nil
}

// itemIndex returns the dense index of item id, creating a bare catalogue
// entry for an item first seen in an interaction.
func (w *writer) itemIndex(id string, now int64) (uint64, bool, error) {
	if b := w.items.Get([]byte(id)); b != nil {
		idx, err := itemIndexOf(b)
		return idx, false, err
	}
	idx, err := w.itemID.NextSequence()
	if err != nil {
		return 0, false, err
	}
	rec, err := itemRecord{Idx: idx, Created: now, Updated: now}.encode()
	if err != nil {
		return 0, false, err
	}
	if err := w.items.Put([]byte(id), rec); err != nil {
		return 0, false, err
	}
	if err := w.itemID.Put(u64(idx), []byte(id)); err != nil {
		return 0, false, err
	}
	w.newItems = append(w.newItems, id)
	w.counters[counterItems]++
	return idx, true, nil
}

// event folds one event into the (user, item) pair.
func (w *writer) event(u *userRecord, item uint64, ev api.Interaction, ts int64, v record.Verdict) error {
	key := pairKey(u.idx, item)
	var p record.Pair
	old := w.pairs.Get(key)
	if old != nil {
		var err error
		if p, err = decodePair(old); err != nil {
			return err
		}
	} else {
		w.counters[counterPairs]++
		w.pairsDelta[item]++
	}
	d := record.Fold(&u.User, &p, old == nil, record.Event{TS: ts, Type: ev.Type, Value: ev.Value,
		HasValue: ev.HasValue, Positive: v.Positive, Negative: v.Negative})
	if d != 0 {
		w.popDelta[item] += d
		w.counters[counterPositives] += d
	}
	w.counters[counterEvents]++
	day := record.DayOf(ts)
	w.days[day]++
	if day != record.DayOf(p.First) {
		w.pairDayDelta[pairDayKey(key, day)]++
	}
	return w.pairs.Put(key, encodePair(p))
}

// flush writes the cached users, popularity deltas and counters.
func (w *writer) flush() error {
	// In key order: an apply writes many thousands of each. bbolt keeps
	// the keys and values until the commit: one slab, sized exactly so
	// that it never moves, holds them all.
	ids := slices.Sorted(maps.Keys(w.userCache))
	size := 0
	for _, id := range ids {
		size += len(id) + userRecordSize
	}
	slab := make([]byte, 0, size)
	for _, id := range ids {
		at := len(slab)
		slab = append(slab, id...)
		slab = w.userCache[id].appendTo(slab)
		if err := w.users.Put(slab[at:at+len(id):at+len(id)], slab[at+len(id):len(slab):len(slab)]); err != nil {
			return err
		}
	}
	for _, ids := range []struct {
		b   *bolt.Bucket
		ids []string
	}{{w.tx.Bucket(bucketUserOrder), w.newUsers}, {w.tx.Bucket(bucketItemOrder), w.newItems}} {
		if err := putOrder(ids.b, ids.ids); err != nil {
			return err
		}
	}
	w.newUsers, w.newItems = nil, nil
	for _, item := range slices.Sorted(maps.Keys(w.popDelta)) {
		if err := addItemCount(w.pop, item, w.popDelta[item]); err != nil {
			return err
		}
	}
	for _, item := range slices.Sorted(maps.Keys(w.pairsDelta)) {
		if err := addItemCount(w.itemPairs, item, w.pairsDelta[item]); err != nil {
			return err
		}
	}
	for name, d := range w.counters {
		if err := addCounter(w.meta, name, d); err != nil {
			return err
		}
	}
	for day, d := range w.days {
		if err := addDay(w.meta, day, d); err != nil {
			return err
		}
	}
	for k, d := range w.pairDayDelta {
		v := int64(getU64(w.pairDays.Get([]byte(k)))) + d
		if err := w.pairDays.Put([]byte(k), u64(uint64(v))); err != nil {
			return err
		}
	}
	return nil
}

// putOrder puts the OrderKeys of ids into an order bucket, in key order.
func putOrder(b *bolt.Bucket, ids []string) error {
	keys := make([][]byte, len(ids))
	for k, id := range ids {
		keys[k] = record.OrderKey(id)
	}
	slices.SortFunc(keys, bytes.Compare)
	for _, k := range keys {
		if err := b.Put(k, nil); err != nil {
			return err
		}
	}
	return nil
}

// addItemCount adds d to item's count in b (item_pop or item_pairs); a
// count that falls to 0 is deleted.
func addItemCount(b *bolt.Bucket, item uint64, d int64) error {
	if d == 0 {
		return nil
	}
	v := int64(getU64(b.Get(u64(item)))) + d
	if v <= 0 {
		return b.Delete(u64(item))
	}
	return b.Put(u64(item), u64(uint64(v)))
}

// DeleteInteraction forgets the pair (user, item).
func (s *Store) DeleteInteraction(ctx context.Context, userID, itemID string) error {
	err := s.updateExclusive(ctx, func(tx *bolt.Tx) error {
		u, err := storedUser(tx, userID)
		if err != nil {
			return err
		}
		ib := tx.Bucket(bucketItems).Get([]byte(itemID))
		if ib == nil {
			return notFound("item", itemID)
		}
		itemIdx, err := itemIndexOf(ib)
		if err != nil {
			return err
		}
		key := pairKey(u.idx, itemIdx)
		pb := tx.Bucket(bucketPairs).Get(key)
		if pb == nil {
			return api.Errorf(api.CodeNotFound, "user %q has no interaction with item %q", userID, itemID)
		}
		p, err := decodePair(pb)
		if err != nil {
			return err
		}
		w := newWriter(tx)
		w.userCache[userID] = &u
		if err := w.forgetPair(&u, itemIdx, p); err != nil {
			return err
		}
		if err := w.pairs.Delete(key); err != nil {
			return err
		}
		return w.flush()
	})
	if err == nil {
		s.eventsVersion.Add(1)
	}
	return err
}

// forgetPair updates the counts for a pair about to be deleted, the
// per-day counters included.
func (w *writer) forgetPair(u *userRecord, item uint64, p record.Pair) error {
	u.Items--
	u.Events -= p.Count
	w.counters[counterPairs]--
	w.pairsDelta[item]--
	w.counters[counterEvents] -= p.Count
	if record.Relevant(p.Flags) {
		u.Positives--
		w.popDelta[item]--
		w.counters[counterPositives]--
	}
	return w.forgetPairDays(pairKey(u.idx, item), p)
}

// History returns one page of a user's pairs in item-index order.
func (s *Store) History(ctx context.Context, userID string, pg api.Page) ([]api.HistoryEntry, string, error) {
	after, err := record.DecodeIndexCursor(pg.Cursor)
	if err != nil {
		return nil, "", err
	}
	var out []api.HistoryEntry
	next := ""
	err = s.viewTail(ctx, func(tx *bolt.Tx, tail []*tailGen) error {
		tu, known, err := tailUserFold(tx, tail, userID)
		if err != nil {
			return err
		}
		var u userRecord
		if ub := tx.Bucket(bucketUsers).Get([]byte(userID)); ub != nil {
			if u, err = decodeUser(ub); err != nil {
				return err
			}
			known = true
		}
		if !known {
			return notFound("user", userID)
		}
		if pg.Cursor != "" && after == math.MaxUint64 {
			// Nothing lies after the last index (and after+1 would
			// wrap round to the first page).
			return nil
		}
		start := uint64(0)
		if pg.Cursor != "" {
			start = after + 1
		}
		ids := tx.Bucket(bucketItemIDs)
		var lastIdx uint64
		return userPairs(tx, tu, u.idx, start, func(item uint64, p record.Pair) bool {
			if len(out) == pg.Limit {
				next = record.EncodeIndexCursor(lastIdx)
				return false
			}
			id, ok := tailItemID(tail, item)
			if !ok {
				id = string(ids.Get(u64(item)))
			}
			out = append(out, p.API(id))
			lastIdx = item
			return true
		})
	})
	return out, next, err
}

// userPairs calls fn with each pair of a user (bbolt index idx, 0 if bbolt
// has no such user) whose item index is at least from, in item order, the
// record of tu (the user's tail, folded; nil for none) taking the place of
// bbolt's, until fn returns false.
func userPairs(tx *bolt.Tx, tu *tailUser, idx, from uint64, fn func(item uint64, p record.Pair) bool) error {
	var over map[uint64]*tailPair
	if tu != nil {
		over = tu.pairs
	}
	var extra []uint64
	for item := range over {
		if item >= from {
			extra = append(extra, item)
		}
	}
	slices.Sort(extra)
	emitExtra := func(below uint64) bool {
		for len(extra) > 0 && extra[0] < below {
			if !fn(extra[0], over[extra[0]].rec) {
				return false
			}
			extra = extra[1:]
		}
		return true
	}
	if idx != 0 {
		prefix := u64(idx)
		c := tx.Bucket(bucketPairs).Cursor()
		for k, v := c.Seek(pairKey(idx, from)); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			item := binary.BigEndian.Uint64(k[8:])
			if !emitExtra(item) {
				return nil
			}
			if _, ok := over[item]; ok {
				continue
			}
			p, err := decodePair(v)
			if err != nil {
				return err
			}
			if !fn(item, p) {
				return nil
			}
		}
	}
	emitExtra(math.MaxUint64)
	return nil
}

// Profile reads a user's live history as dense item indices (sorted): what
// serving needs to score and to exclude consumed items at request time.
// Events in the unapplied tail count at once.
func (s *Store) Profile(ctx context.Context, userID string) (api.Profile, error) {
	var pr api.Profile
	err := s.viewTail(ctx, func(tx *bolt.Tx, tail []*tailGen) error {
		var u userRecord
		if ub := tx.Bucket(bucketUsers).Get([]byte(userID)); ub != nil {
			var err error
			if u, err = decodeUser(ub); err != nil {
				return err
			}
			pr.Known = true
		}
		tu, inTail, err := tailUserFold(tx, tail, userID)
		if err != nil {
			return err
		}
		if inTail {
			u.Items, u.Positives = tu.rec.Items, tu.rec.Positives
			pr.Known = true
		}
		if !pr.Known {
			return nil
		}
		// The counters size the lists, sparing the appends' regrowth; they
		// are hints only, so a bad value cannot over-allocate much.
		pr.Consumed = make([]uint32, 0, min(max(u.Items, 0), 1<<16))
		pr.Positive = make([]uint32, 0, min(max(u.Positives, 0), 1<<16))
		pr.PositiveDays = make([]int32, 0, cap(pr.Positive))
		add := func(item uint64, flags byte, first int64) {
			pr.Consumed = append(pr.Consumed, uint32(item))
			switch {
			case record.Relevant(flags):
				pr.Positive = append(pr.Positive, uint32(item))
				pr.PositiveDays = append(pr.PositiveDays, record.DayNumber(first))
			case flags&record.FlagNegative != 0:
				pr.Negative = append(pr.Negative, uint32(item))
			}
		}
		if inTail {
			return userPairs(tx, tu, u.idx, 0, func(item uint64, p record.Pair) bool {
				add(item, p.Flags, p.First)
				return true
			})
		}
		prefix := u64(u.idx)
		c := tx.Bucket(bucketPairs).Cursor()
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			if len(v) < 33 {
				return fmt.Errorf("storage: pair record of %d bytes", len(v))
			}
			add(binary.BigEndian.Uint64(k[8:]), v[32], int64(binary.BigEndian.Uint64(v[8:])))
		}
		return nil
	})
	return pr, err
}
