package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/storage/record"
)

// User reads a user's summary.
func (s *Store) User(ctx context.Context, id string) (api.User, error) {
	var t record.User
	err := s.pool.QueryRow(ctx, `SELECT created, last_seen, items, positives, events FROM users WHERE id = $1`, id).
		Scan(&t.Created, &t.LastSeen, &t.Items, &t.Positives, &t.Events)
	if err == pgx.ErrNoRows {
		return api.User{}, notFound("user", id)
	}
	if err != nil {
		return api.User{}, s.errOf(err)
	}
	return t.API(id), nil
}

// Users returns one page of the users in natural order (see
// record.NaturalKey); the cursor is the last id of the previous page.
func (s *Store) Users(ctx context.Context, pg api.Page) ([]api.User, string, error) {
	var out []api.User
	var id string
	var t record.User
	next, err := s.page(ctx, `SELECT id, created, last_seen, items, positives, events FROM users`, pg,
		[]any{&id, &t.Created, &t.LastSeen, &t.Items, &t.Positives, &t.Events}, func() error {
			out = append(out, t.API(id))
			return nil
		}, func() string { return out[len(out)-1].ID })
	if err != nil {
		return nil, "", err
	}
	return out, next, nil
}

// DeleteUser deletes a user and every pair of theirs.
func (s *Store) DeleteUser(ctx context.Context, id string) error {
	err := s.write(ctx, func(tx pgx.Tx) error { return deleteWithPairs(ctx, tx, "user", id) })
	if err == nil {
		s.eventsVersion.Add(1)
	}
	return err
}

// indexOf is the dense index of user or item id, not_found when none.
func indexOf(ctx context.Context, tx pgx.Tx, kind, id string) (int64, error) {
	var idx int64
	err := tx.QueryRow(ctx, `SELECT idx FROM `+kind+`s WHERE id = $1`, id).Scan(&idx)
	if err == pgx.ErrNoRows {
		return 0, notFound(kind, id)
	}
	return idx, err
}

// deleteWithPairs deletes a user or an item (kind) and every pair with it.
func deleteWithPairs(ctx context.Context, tx pgx.Tx, kind, id string) error {
	idx, err := indexOf(ctx, tx, kind, id)
	if err != nil {
		return err
	}
	if err := forget(ctx, tx, kind+"_idx = $1", idx); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `DELETE FROM `+kind+`s WHERE idx = $1`, idx); err != nil {
		return err
	}
	return addCounters(ctx, tx, map[string]int64{kind + "s": -1})
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
