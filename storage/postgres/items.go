package postgres

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/storage/record"
)

// itemColumns are the columns itemRow scans, in order.
const itemColumns = `idx, id, features, categories, labels, hidden, created, updated, positives`

// itemRow is a row of items.
type itemRow struct {
	idx                     int64
	id                      string
	features, labels        []byte // JSON, nil for none
	categories              []string
	hidden                  bool
	created, updated, posit int64
}

func (r *itemRow) dest() []any {
	return []any{&r.idx, &r.id, &r.features, &r.categories, &r.labels, &r.hidden, &r.created, &r.updated, &r.posit}
}

func (r *itemRow) toAPI() (api.Item, error) {
	it := api.Item{ID: r.id, Hidden: r.hidden, CreatedAt: record.FromNano(r.created),
		UpdatedAt: record.FromNano(r.updated), Positives: r.posit}
	if len(r.categories) > 0 {
		it.Categories = r.categories
	}
	if err := unmarshalOpt(r.features, &it.Features); err != nil {
		return it, fmt.Errorf("item %q features: %w", r.id, err)
	}
	if err := unmarshalOpt(r.labels, &it.Labels); err != nil {
		return it, fmt.Errorf("item %q labels: %w", r.id, err)
	}
	return it, nil
}

// unmarshalOpt decodes JSON b into a map, leaving it nil for none or an
// empty one (as the bbolt store, which omits empty maps).
func unmarshalOpt[M ~map[string]V, V any](b []byte, m *M) error {
	if len(b) == 0 {
		return nil
	}
	if err := json.Unmarshal(b, m); err != nil {
		return err
	}
	if len(*m) == 0 {
		*m = nil
	}
	return nil
}

// jsonOpt encodes a map as JSON, nil (NULL) for an empty one.
func jsonOpt[M ~map[string]V, V any](m M) ([]byte, error) {
	if len(m) == 0 {
		return nil, nil
	}
	return json.Marshal(m)
}

// itemColumnValues are an item's optional fields as stored: NULL (nil)
// when empty.
type itemColumnValues struct {
	features, labels []byte
	categories       []string
}

func columnsOf(it api.Item) (itemColumnValues, error) {
	var c itemColumnValues
	var err error
	if c.features, err = jsonOpt(it.Features); err != nil {
		return c, err
	}
	if c.labels, err = jsonOpt(it.Labels); err != nil {
		return c, err
	}
	if len(it.Categories) > 0 {
		c.categories = it.Categories
	}
	return c, nil
}

// PutItems creates or replaces items in one transaction. Replacing keeps the
// item's dense index, creation time and interactions.
func (s *Store) PutItems(ctx context.Context, items []api.Item) error {
	if len(items) == 0 {
		return nil
	}
	now := s.now().UnixNano()
	err := s.writeCatalogue(ctx, func(tx pgx.Tx) error {
		ids := make([]string, len(items))
		for k, it := range items {
			ids[k] = it.ID
		}
		known := map[string]bool{}
		rows, _ := tx.Query(ctx, `SELECT id FROM items WHERE id = ANY($1)`, ids)
		var id string
		if _, err := pgx.ForEachRow(rows, []any{&id}, func() error { known[id] = true; return nil }); err != nil {
			return err
		}
		var fresh []string
		for _, id := range ids {
			if !known[id] {
				known[id] = true
				fresh = append(fresh, id)
			}
		}
		idx := map[string]int64{}
		if len(fresh) > 0 {
			first, err := nextSeq(ctx, tx, "item_seq", len(fresh))
			if err != nil {
				return err
			}
			for k, id := range fresh {
				idx[id] = first + int64(k)
			}
			if err := addCounters(ctx, tx, map[string]int64{"items": int64(len(fresh))}); err != nil {
				return err
			}
		}
		b := &pgx.Batch{}
		for _, it := range items {
			c, err := columnsOf(it)
			if err != nil {
				return err
			}
			if i, ok := idx[it.ID]; ok {
				delete(idx, it.ID) // a repeat within the batch replaces it
				b.Queue(`INSERT INTO items (idx, id, features, categories, labels, hidden, created, updated)
					VALUES ($1, $2, $3, $4, $5, $6, $7, $7)`, i, it.ID, c.features, c.categories, c.labels, it.Hidden, now)
				continue
			}
			b.Queue(`UPDATE items SET features = $2, categories = $3, labels = $4, hidden = $5, updated = $6 WHERE id = $1`,
				it.ID, c.features, c.categories, c.labels, it.Hidden, now)
		}
		return tx.SendBatch(ctx, b).Close()
	})
	if err == nil {
		s.itemsVersion.Add(1)
	}
	return err
}

// UpdateItem reads item id, applies change to it and stores the result in
// one transaction. A missing item is not_found; an error from change
// aborts the update and is returned as is.
func (s *Store) UpdateItem(ctx context.Context, id string, change func(api.Item) (api.Item, error)) (api.Item, error) {
	var out api.Item
	err := s.writeCatalogue(ctx, func(tx pgx.Tx) error {
		var r itemRow
		if err := tx.QueryRow(ctx, `SELECT `+itemColumns+` FROM items WHERE id = $1`, id).Scan(r.dest()...); err == pgx.ErrNoRows {
			return notFound("item", id)
		} else if err != nil {
			return err
		}
		old, err := r.toAPI()
		if err != nil {
			return err
		}
		it, err := change(old)
		if err != nil {
			return err
		}
		c, err := columnsOf(it)
		if err != nil {
			return err
		}
		now := s.now().UnixNano()
		if _, err := tx.Exec(ctx, `UPDATE items SET features = $2, categories = $3, labels = $4, hidden = $5, updated = $6 WHERE idx = $1`,
			r.idx, c.features, c.categories, c.labels, it.Hidden, now); err != nil {
			return err
		}
		r.features, r.categories, r.labels, r.hidden, r.updated = c.features, c.categories, c.labels, it.Hidden, now
		out, err = r.toAPI()
		return err
	})
	if err != nil {
		return api.Item{}, err
	}
	s.itemsVersion.Add(1)
	return out, nil
}

// Item reads one item.
func (s *Store) Item(ctx context.Context, id string) (api.Item, error) {
	var r itemRow
	err := s.pool.QueryRow(ctx, `SELECT `+itemColumns+` FROM items WHERE id = $1`, id).Scan(r.dest()...)
	if err == pgx.ErrNoRows {
		return api.Item{}, notFound("item", id)
	}
	if err != nil {
		return api.Item{}, s.errOf(err)
	}
	return r.toAPI()
}

// Items returns one page of the catalogue in natural order (see
// record.NaturalKey); the cursor is the last id of the previous page.
func (s *Store) Items(ctx context.Context, pg api.Page) ([]api.Item, string, error) {
	var out []api.Item
	var r itemRow
	next, err := s.page(ctx, `SELECT `+itemColumns+` FROM items`, pg, r.dest(), func() error {
		it, err := r.toAPI()
		out = append(out, it)
		return err
	}, func() string { return out[len(out)-1].ID })
	if err != nil {
		return nil, "", err
	}
	return out[:min(len(out), pg.Limit)], next, nil
}

// page runs the listing query from (users or items) in natural order after
// the page's cursor, one row more than its limit, scanning each row into
// dest and calling row; last is the id of the last row kept. It returns
// the next page's cursor.
func (s *Store) page(ctx context.Context, from string, pg api.Page, dest []any, row func() error, last func() string) (string, error) {
	q := from + ` ORDER BY recsys_natural_key(id), id LIMIT $1`
	args := []any{pg.Limit + 1}
	if pg.Cursor != "" {
		after, err := record.DecodeIDCursor(pg.Cursor)
		if err != nil {
			return "", err
		}
		q = from + ` WHERE (recsys_natural_key(id), id) > (recsys_natural_key($2), $2::text COLLATE "C")
			ORDER BY recsys_natural_key(id), id LIMIT $1`
		args = append(args, after)
	}
	rows, _ := s.pool.Query(ctx, q, args...)
	n := 0
	_, err := pgx.ForEachRow(rows, dest, func() error {
		if n++; n > pg.Limit {
			return nil
		}
		return row()
	})
	if err != nil {
		return "", s.errOf(err)
	}
	if n <= pg.Limit || pg.Limit == 0 {
		return "", nil
	}
	return record.EncodeIDCursor(last()), nil
}

// DeleteItem deletes an item and every pair with it.
func (s *Store) DeleteItem(ctx context.Context, id string) error {
	err := s.writeCatalogue(ctx, func(tx pgx.Tx) error { return deleteWithPairs(ctx, tx, "item", id) })
	if err == nil {
		s.itemsVersion.Add(1)
		s.eventsVersion.Add(1)
	}
	return err
}

// ItemsInteracted reports, for each dense item index, whether any user has
// an event of any type with it.
func (s *Store) ItemsInteracted(ctx context.Context, idx []uint32) ([]bool, error) {
	q := make([]int64, len(idx))
	for k, i := range idx {
		q[k] = int64(i)
	}
	rows, _ := s.pool.Query(ctx, `SELECT q.i FROM unnest($1::bigint[]) AS q(i)
		WHERE EXISTS (SELECT 1 FROM pairs p WHERE p.item_idx = q.i)`, q)
	yes := map[int64]bool{}
	var i int64
	if _, err := pgx.ForEachRow(rows, []any{&i}, func() error { yes[i] = true; return nil }); err != nil {
		return nil, s.errOf(err)
	}
	out := make([]bool, len(idx))
	for k, i := range q {
		out[k] = yes[i]
	}
	return out, nil
}
