package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/storage/record"
)

// A write of a rule or a placement notifies NotifyChannel with this
// payload, so that the other replicas serve it as soon as it commits.
const RulesChanged = "rules"

// CreateRule stores a new rule; a conflict if one has its name.
func (s *Store) CreateRule(ctx context.Context, r api.Rule) error {
	v, err := record.EncodeRule(r)
	if err != nil {
		return err
	}
	return s.tx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `INSERT INTO rules (name, record) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING`, r.Name, v)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return api.Errorf(api.CodeConflict, "rule %q exists; PUT /admin/rules/%s replaces it", r.Name, r.Name)
		}
		return notifyRules(ctx, tx)
	})
}

// UpdateRule replaces a stored rule.
func (s *Store) UpdateRule(ctx context.Context, r api.Rule) error {
	v, err := record.EncodeRule(r)
	if err != nil {
		return err
	}
	return s.tx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE rules SET record = $2 WHERE name = $1`, r.Name, v)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return notFound("rule", r.Name)
		}
		return notifyRules(ctx, tx)
	})
}

// DeleteRule deletes a stored rule.
func (s *Store) DeleteRule(ctx context.Context, name string) error {
	return s.deleteNamed(ctx, `DELETE FROM rules WHERE name = $1`, "rule", name)
}

// Rules lists the rules by name.
func (s *Store) Rules(ctx context.Context) ([]api.Rule, error) {
	rows, _ := s.pool.Query(ctx, `SELECT name, record FROM rules ORDER BY name`)
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (api.Rule, error) {
		var name string
		var v []byte
		if err := row.Scan(&name, &v); err != nil {
			return api.Rule{}, err
		}
		return record.DecodeRule(name, v)
	})
	return out, s.errOf(err)
}

// PutPlacement creates or replaces a placement.
func (s *Store) PutPlacement(ctx context.Context, p api.Placement) (created bool, err error) {
	v, err := record.EncodePlacement(p)
	if err != nil {
		return false, err
	}
	err = s.tx(ctx, func(tx pgx.Tx) error {
		// xmax is 0 for a row this statement inserted.
		if err := tx.QueryRow(ctx, `INSERT INTO placements (name, record) VALUES ($1, $2)
			ON CONFLICT (name) DO UPDATE SET record = excluded.record RETURNING xmax = 0`, p.Name, v).Scan(&created); err != nil {
			return err
		}
		return notifyRules(ctx, tx)
	})
	return created, err
}

// DeletePlacement deletes a stored placement.
func (s *Store) DeletePlacement(ctx context.Context, name string) error {
	return s.deleteNamed(ctx, `DELETE FROM placements WHERE name = $1`, "placement", name)
}

// Placements lists the placements by name.
func (s *Store) Placements(ctx context.Context) ([]api.Placement, error) {
	rows, _ := s.pool.Query(ctx, `SELECT name, record FROM placements ORDER BY name`)
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (api.Placement, error) {
		var name string
		var v []byte
		if err := row.Scan(&name, &v); err != nil {
			return api.Placement{}, err
		}
		return record.DecodePlacement(name, v)
	})
	return out, s.errOf(err)
}

func (s *Store) deleteNamed(ctx context.Context, sql, kind, name string) error {
	return s.tx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, sql, name)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return notFound(kind, name)
		}
		return notifyRules(ctx, tx)
	})
}

// notifyRules tells the other replicas, when tx commits, that the rules
// or placements changed.
func notifyRules(ctx context.Context, tx pgx.Tx) error {
	_, err := tx.Exec(ctx, `SELECT pg_notify($1, $2)`, NotifyChannel, RulesChanged)
	return err
}
