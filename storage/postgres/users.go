package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"recsys/api"
	"recsys/storage"
)

// User reads a user's summary.
func (s *Store) User(ctx context.Context, id string) (api.User, error) {
	var t storage.Tally
	err := s.pool.QueryRow(ctx, `SELECT created, last_seen, items, positives, events FROM users WHERE id = $1`, id).
		Scan(&t.Created, &t.LastSeen, &t.Items, &t.Positives, &t.Events)
	if err == pgx.ErrNoRows {
		return api.User{}, notFound("user", id)
	}
	if err != nil {
		return api.User{}, s.errOf(err)
	}
	return storage.UserOf(id, t), nil
}

// DeleteUser deletes a user and every pair of theirs.
func (s *Store) DeleteUser(ctx context.Context, id string) error {
	err := s.write(ctx, func(tx pgx.Tx) error {
		var u int64
		if err := tx.QueryRow(ctx, `SELECT idx FROM users WHERE id = $1`, id).Scan(&u); err == pgx.ErrNoRows {
			return notFound("user", id)
		} else if err != nil {
			return err
		}
		if err := forget(ctx, tx, "user_idx = $1", u); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM users WHERE idx = $1`, u); err != nil {
			return err
		}
		return addCounters(ctx, tx, map[string]int64{"users": -1})
	})
	if err == nil {
		s.eventsVersion.Add(1)
	}
	return err
}

// UserIDs maps dense user indices to ids ("" for unknown ones).
func (s *Store) UserIDs(ctx context.Context, idx []uint32) ([]string, error) {
	out := make([]string, len(idx))
	q := make([]int64, len(idx))
	for k, i := range idx {
		q[k] = int64(i)
	}
	rows, _ := s.pool.Query(ctx, `SELECT idx, id FROM users WHERE idx = ANY($1)`, q)
	byIdx := map[int64]string{}
	var i int64
	var id string
	if _, err := pgx.ForEachRow(rows, []any{&i, &id}, func() error { byIdx[i] = id; return nil }); err != nil {
		return nil, s.errOf(err)
	}
	for k, i := range q {
		out[k] = byIdx[i]
	}
	return out, nil
}
