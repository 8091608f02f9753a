package storage

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/storage/record"
)

// User reads a user's summary.
func (s *Store) User(ctx context.Context, id string) (api.User, error) {
	var u api.User
	err := s.viewTail(ctx, func(tx *bolt.Tx, tail []*tailGen) error {
		if tu, ok, err := tailUserFold(tx, tail, id); err != nil || ok {
			if ok {
				u = tu.rec.API(id)
			}
			return err
		}
		r, err := storedUser(tx, id)
		if err != nil {
			return err
		}
		u = r.API(id)
		return nil
	})
	return u, err
}

// Users returns one page of the users in natural order
// (record.NaturalKey); the cursor is the last id of the previous page.
// Users the event log's tail created are listed once applied, so the tail
// is applied first when it holds events.
func (s *Store) Users(ctx context.Context, pg api.Page) ([]api.User, string, error) {
	after, err := afterCursor(pg.Cursor)
	if err != nil {
		return nil, "", err
	}
	if s.tailHasEvents() {
		if err := s.syncTail(ctx); err != nil {
			return nil, "", err
		}
	}
	var out []api.User
	more := false
	err = s.viewTail(ctx, func(tx *bolt.Tx, tail []*tailGen) error {
		out = out[:0]
		var err error
		more, err = pageOrder(tx, bucketUserOrder, bucketUsers, after, pg.Limit, func(id string) error {
			if tu, ok, err := tailUserFold(tx, tail, id); err != nil || ok {
				if ok {
					out = append(out, tu.rec.API(id))
				}
				return err
			}
			r, err := storedUser(tx, id)
			if err != nil {
				return fmt.Errorf("storage: user %q of user_order: %w", id, err)
			}
			out = append(out, r.API(id))
			return nil
		})
		return err
	})
	return out, nextCursor(more, len(out), func() string { return out[len(out)-1].ID }), err
}

// DeleteUser deletes a user and every pair of theirs.
func (s *Store) DeleteUser(ctx context.Context, id string) error {
	err := s.updateExclusive(ctx, func(tx *bolt.Tx) error {
		u, err := storedUser(tx, id)
		if err != nil {
			return err
		}
		w := newWriter(tx)
		prefix := u64(u.idx)
		var keys [][]byte
		c := w.pairs.Cursor()
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			p, err := decodePair(v)
			if err != nil {
				return err
			}
			item := binary.BigEndian.Uint64(k[8:])
			if err := w.forgetPair(&u, item, p); err != nil {
				return err
			}
			keys = append(keys, append([]byte(nil), k...))
		}
		for _, k := range keys {
			if err := w.pairs.Delete(k); err != nil {
				return err
			}
		}
		if err := w.users.Delete([]byte(id)); err != nil {
			return err
		}
		if err := w.userIDs.Delete(u64(u.idx)); err != nil {
			return err
		}
		if err := tx.Bucket(bucketUserOrder).Delete(record.OrderKey(id)); err != nil {
			return err
		}
		w.counters[counterUsers]--
		return w.flush()
	})
	if err == nil {
		s.eventsVersion.Add(1)
	}
	return err
}

// UserIDs maps dense user indices to ids ("" for unknown ones).
func (s *Store) UserIDs(ctx context.Context, idx []uint32) ([]string, error) {
	out := make([]string, len(idx))
	err := s.view(ctx, func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketUserIDs)
		for k, i := range idx {
			out[k] = string(b.Get(u64(uint64(i))))
		}
		return nil
	})
	return out, err
}
