package storage

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"slices"

	bolt "go.etcd.io/bbolt"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/storage/record"
)

// PutItems creates or replaces items in one transaction. Replacing keeps the
// item's dense index, creation time and interactions.
func (s *Store) PutItems(ctx context.Context, items []api.Item) error {
	now := s.now().UnixNano()
	err := s.updateExclusive(ctx, func(tx *bolt.Tx) error {
		w := newWriter(tx)
		for _, it := range items {
			rec := itemRecord{Features: it.Features, Categories: it.Categories, Labels: it.Labels,
				Hidden: it.Hidden, Created: now, Updated: now}
			if b := w.items.Get([]byte(it.ID)); b != nil {
				old, err := decodeItem(b)
				if err != nil {
					return err
				}
				rec.Idx, rec.Created = old.Idx, old.Created
			} else {
				idx, err := w.itemID.NextSequence()
				if err != nil {
					return err
				}
				rec.Idx = idx
				if err := w.itemID.Put(u64(idx), []byte(it.ID)); err != nil {
					return err
				}
				w.newItems = append(w.newItems, it.ID)
				w.counters[counterItems]++
			}
			b, err := rec.encode()
			if err != nil {
				return err
			}
			if err := w.items.Put([]byte(it.ID), b); err != nil {
				return err
			}
		}
		// With the tail applied, ingest allocates after bbolt's sequence.
		if s.log != nil {
			s.nextItem = max(s.nextItem, w.itemID.Sequence()+1)
		}
		return w.flush()
	})
	if err == nil {
		s.itemsVersion.Add(1)
	}
	return err
}

// UpdateItem reads item id, applies change to it and stores the result in
// one write transaction, so that two concurrent updates of an item cannot
// lose each other's change. The item keeps its dense index, creation time
// and interactions. A missing item is not_found; an error from change
// aborts the update and is returned as is. change runs inside the
// transaction: it must be quick and must not call the store.
func (s *Store) UpdateItem(ctx context.Context, id string, change func(api.Item) (api.Item, error)) (api.Item, error) {
	var out api.Item
	err := s.updateExclusive(ctx, func(tx *bolt.Tx) error {
		items := tx.Bucket(bucketItems)
		b := items.Get([]byte(id))
		if b == nil {
			return notFound("item", id)
		}
		old, err := decodeItem(b)
		if err != nil {
			return err
		}
		positives := int64(getU64(tx.Bucket(bucketItemPop).Get(u64(old.Idx))))
		it, err := change(old.toAPI(id, positives))
		if err != nil {
			return err
		}
		rec := itemRecord{Idx: old.Idx, Features: it.Features, Categories: it.Categories, Labels: it.Labels,
			Hidden: it.Hidden, Created: old.Created, Updated: s.now().UnixNano()}
		if b, err = rec.encode(); err != nil {
			return err
		}
		out = rec.toAPI(id, positives)
		return items.Put([]byte(id), b)
	})
	if err != nil {
		return api.Item{}, err
	}
	s.itemsVersion.Add(1)
	return out, nil
}

// Item reads one item.
func (s *Store) Item(ctx context.Context, id string) (api.Item, error) {
	var it api.Item
	if err := s.prefold(ctx); err != nil {
		return api.Item{}, err
	}
	err := s.viewTail(ctx, func(tx *bolt.Tx, tail []*tailGen) error {
		var r itemRecord
		if b := tx.Bucket(bucketItems).Get([]byte(id)); b != nil {
			var err error
			if r, err = decodeItem(b); err != nil {
				return err
			}
		} else if t, ok := tailNewItem(tail, id); ok {
			// Created by an event of the tail: a bare record, as the
			// applier will write it.
			r = itemRecord{Idx: t.idx, Created: t.created, Updated: t.created}
		} else {
			return notFound("item", id)
		}
		if err := s.foldTail(tx, tail); err != nil {
			return err
		}
		it = r.toAPI(id, int64(getU64(tx.Bucket(bucketItemPop).Get(u64(r.Idx))))+tailPopDelta(tail, r.Idx))
		return nil
	})
	return it, err
}

// Items returns one page of the catalogue in natural order
// (record.NaturalKey); the cursor is the last id of the previous page, so
// it stays valid when that item is deleted.
func (s *Store) Items(ctx context.Context, pg api.Page) ([]api.Item, string, error) {
	after, err := afterCursor(pg.Cursor)
	if err != nil {
		return nil, "", err
	}
	if s.tailHasNewItems() {
		// Items the tail created are listed once applied.
		if err := s.syncTail(ctx); err != nil {
			return nil, "", err
		}
	}
	var out []api.Item
	more := false
	if err := s.prefold(ctx); err != nil {
		return nil, "", err
	}
	err = s.viewTail(ctx, func(tx *bolt.Tx, tail []*tailGen) error {
		out = out[:0]
		if err := s.foldTail(tx, tail); err != nil {
			return err
		}
		items, pop := tx.Bucket(bucketItems), tx.Bucket(bucketItemPop)
		var err error
		more, err = pageOrder(tx, bucketItemOrder, bucketItems, after, pg.Limit, func(id string) error {
			v := items.Get([]byte(id))
			if v == nil {
				return fmt.Errorf("storage: item %q of item_order is not stored", id)
			}
			r, err := decodeItem(v)
			if err != nil {
				return err
			}
			out = append(out, r.toAPI(id, int64(getU64(pop.Get(u64(r.Idx))))+tailPopDelta(tail, r.Idx)))
			return nil
		})
		return err
	})
	return out, nextCursor(more, len(out), func() string { return out[len(out)-1].ID }), err
}

// afterCursor reads a listing's cursor: the id the previous page ended
// with, "" for the first page.
func afterCursor(c string) (string, error) {
	if c == "" {
		return "", nil
	}
	return record.DecodeIDCursor(c)
}

// nextCursor is the cursor of the page after one of n entries ending with
// last(), "" when none follows.
func nextCursor(more bool, n int, last func() string) string {
	if !more || n == 0 {
		return ""
	}
	return record.EncodeIDCursor(last())
}

// pageOrder calls visit with the ids of the order bucket order after the
// id after ("" from the first), at most limit of them, and reports whether
// more follow. In a file of version 5 or older opened read-only, which has
// no order buckets, it sorts the keys of records (users or items) instead.
func pageOrder(tx *bolt.Tx, order, records []byte, after string, limit int, visit func(id string) error) (more bool, err error) {
	var start []byte
	if after != "" {
		start = record.OrderKey(after)
	}
	var next func() []byte
	if b := tx.Bucket(order); b != nil {
		c := b.Cursor()
		k, _ := c.First()
		if start != nil {
			if k, _ = c.Seek(start); bytes.Equal(k, start) {
				k, _ = c.Next()
			}
		}
		next = func() []byte {
			out := k
			if k != nil {
				k, _ = c.Next()
			}
			return out
		}
	} else {
		var keys [][]byte
		if err := tx.Bucket(records).ForEach(func(k, _ []byte) error {
			keys = append(keys, record.OrderKey(string(k)))
			return nil
		}); err != nil {
			return false, err
		}
		slices.SortFunc(keys, bytes.Compare)
		at, found := slices.BinarySearchFunc(keys, start, bytes.Compare)
		if found {
			at++
		}
		next = func() []byte {
			if at == len(keys) {
				return nil
			}
			at++
			return keys[at-1]
		}
	}
	for n := 0; ; n++ {
		k := next()
		if k == nil {
			return false, nil
		}
		if n == limit {
			return true, nil
		}
		if err := visit(record.OrderKeyID(k)); err != nil {
			return false, err
		}
	}
}

// DeleteItem deletes an item and every pair with it.
func (s *Store) DeleteItem(ctx context.Context, id string) error {
	err := s.updateExclusive(ctx, func(tx *bolt.Tx) error {
		it, err := storedItem(tx, id)
		if err != nil {
			return err
		}
		if s.log != nil {
			s.storedItems = nil // under s.mu (exclusive); the id may come back with a new index
		}
		w := newWriter(tx)
		// The item's pairs: one look-up per user, since pairs are keyed
		// user first (version 5 keeps no per-item index; schema.go).
		var users []uint64
		if getU64(w.itemPairs.Get(u64(it.Idx))) > 0 {
			c := w.userIDs.Cursor()
			for k, _ := c.First(); k != nil; k, _ = c.Next() {
				if uidx := binary.BigEndian.Uint64(k); w.pairs.Get(pairKey(uidx, it.Idx)) != nil {
					users = append(users, uidx)
				}
			}
		}
		for _, uidx := range users {
			uid := string(w.userIDs.Get(u64(uidx)))
			u, err := w.user(uid, 0)
			if err != nil {
				return err
			}
			key := pairKey(uidx, it.Idx)
			p, err := decodePair(w.pairs.Get(key))
			if err != nil {
				return err
			}
			if err := w.forgetPair(u, it.Idx, p); err != nil {
				return err
			}
			if err := w.pairs.Delete(key); err != nil {
				return err
			}
		}
		delete(w.popDelta, it.Idx)
		delete(w.pairsDelta, it.Idx)
		if err := w.pop.Delete(u64(it.Idx)); err != nil {
			return err
		}
		if err := w.itemPairs.Delete(u64(it.Idx)); err != nil {
			return err
		}
		if err := w.items.Delete([]byte(id)); err != nil {
			return err
		}
		if err := w.itemID.Delete(u64(it.Idx)); err != nil {
			return err
		}
		if err := tx.Bucket(bucketItemOrder).Delete(record.OrderKey(id)); err != nil {
			return err
		}
		w.counters[counterItems]--
		return w.flush()
	})
	if err == nil {
		s.itemsVersion.Add(1)
		s.eventsVersion.Add(1)
	}
	return err
}

// ItemsInteracted reports, for each dense item index, whether any user has
// an event of any type with it (a pair, positive or not): what tells a
// cold item (no events at all) from a known-unpopular one (events, no
// positives), which popularity alone cannot. One look-up per item in the
// per-item pair counts (in a file of schema version 4 or older opened
// read-only, one seek in its per-item pair index).
func (s *Store) ItemsInteracted(ctx context.Context, idx []uint32) ([]bool, error) {
	out := make([]bool, len(idx))
	err := s.viewTail(ctx, func(tx *bolt.Tx, tail []*tailGen) error {
		counts, old := tx.Bucket(bucketItemPairs), tx.Bucket(bucketItemUsers)
		for k, i := range idx {
			key := u64(uint64(i))
			switch {
			case counts != nil:
				out[k] = counts.Get(key) != nil
			case old != nil:
				at, _ := old.Cursor().Seek(key)
				out[k] = at != nil && bytes.HasPrefix(at, key)
			}
			for _, g := range tail {
				if _, ok := g.touched[uint64(i)]; ok {
					out[k] = true
				}
			}
		}
		return nil
	})
	return out, err
}
