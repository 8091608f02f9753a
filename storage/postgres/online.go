package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/storage/record"
)

// Online measurement on PostgreSQL (docs/design.md#online): the same
// answers as the bbolt store (storage/online.go), checked by the contract.

// PutImpressions records lists and counts the new ones, in one transaction.
func (s *Store) PutImpressions(ctx context.Context, imps []api.Impression) error {
	if len(imps) == 0 {
		return nil
	}
	return s.tx(ctx, func(tx pgx.Tx) error {
		var b pgx.Batch
		for _, imp := range imps {
			if _, ok := api.RecommendationTime(imp.ID); !ok { // ids keep the log in time order (PruneImpressions)
				return fmt.Errorf("impression %q: not an id of api.NewRecommendationID", imp.ID)
			}
			b.Queue(`INSERT INTO impressions (id, user_id, at, model, model_version, experiment, arm, items, placement)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (id) DO NOTHING`,
				imp.ID, imp.UserID, record.UnixNano(imp.At), imp.Model, imp.ModelVersion, imp.Experiment, imp.Arm, imp.Items, imp.Placement)
		}
		res := tx.SendBatch(ctx, &b)
		var added []api.Impression
		for _, imp := range imps {
			tag, err := res.Exec()
			if err != nil {
				res.Close()
				return err
			}
			if tag.RowsAffected() > 0 { // else a retried flush: counted already
				added = append(added, imp)
			}
		}
		if err := res.Close(); err != nil {
			return err
		}
		for _, c := range record.TallyShown(added) {
			if err := addOnline(ctx, tx, c, [4]int64{c.Lists, c.Impressions, 0, 0}); err != nil {
				return err
			}
		}
		return nil
	})
}

// addOnline adds d (lists, impressions, clicks, conversions) to the
// counter row of c's day, model, experiment, arm and placement.
func addOnline(ctx context.Context, tx pgx.Tx, c api.OnlineCount, d [4]int64) error {
	_, err := tx.Exec(ctx, `INSERT INTO online_counts AS o (day, model, experiment, arm, placement, lists, impressions, clicks, conversions)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
		ON CONFLICT (day, model, experiment, arm, placement) DO UPDATE SET lists = o.lists + $6,
			impressions = o.impressions + $7, clicks = o.clicks + $8, conversions = o.conversions + $9`,
		c.Day, c.Model, c.Experiment, c.Arm, c.Placement, d[0], d[1], d[2], d[3])
	return err
}

const impressionColumns = `id, user_id, at, model, model_version, experiment, arm, items, placement`

func scanImpression(row pgx.Row) (api.Impression, error) {
	var imp api.Impression
	var at int64
	err := row.Scan(&imp.ID, &imp.UserID, &at, &imp.Model, &imp.ModelVersion, &imp.Experiment, &imp.Arm, &imp.Items, &imp.Placement)
	imp.At = record.FromNano(at)
	return imp, err
}

// findImpression is the impression a touch is credited to and the item's
// position in it; ok is false when there is none.
func findImpression(ctx context.Context, tx pgx.Tx, t api.Touch, window time.Duration) (api.Impression, int, bool, error) {
	var row pgx.Row
	if t.RecommendationID != "" {
		row = tx.QueryRow(ctx, `SELECT `+impressionColumns+` FROM impressions WHERE id = $1`, t.RecommendationID)
	} else {
		row = tx.QueryRow(ctx, `SELECT `+impressionColumns+` FROM impressions
			WHERE user_id = $1 AND at BETWEEN $2 AND $3 AND $4 = ANY (items) ORDER BY at DESC, id DESC LIMIT 1`,
			t.UserID, record.UnixNano(t.At.Add(-window)), record.UnixNano(t.At), t.ItemID)
	}
	imp, err := scanImpression(row)
	if err == pgx.ErrNoRows {
		return imp, 0, false, nil
	}
	if err != nil {
		return imp, 0, false, err
	}
	pos := record.Matches(imp, t, window)
	return imp, pos, pos >= 0, nil
}

// Attribute credits touches to what was shown (api.OnlineStore). One
// query first keeps batches that touch nothing shown off the write path;
// the credits are written under a lock so that replicas crediting the same
// shown item count it once.
func (s *Store) Attribute(ctx context.Context, touches []api.Touch, window time.Duration) ([]api.Attributed, error) {
	if len(touches) == 0 {
		return nil, nil
	}
	var ids, users []string
	since := int64(1<<63 - 1)
	for _, t := range touches {
		if t.RecommendationID != "" {
			ids = append(ids, t.RecommendationID)
		} else {
			users = append(users, t.UserID)
			since = min(since, record.UnixNano(t.At.Add(-window)))
		}
	}
	var found bool
	err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM impressions WHERE id = ANY ($1))
		OR EXISTS (SELECT 1 FROM impressions WHERE user_id = ANY ($2) AND at >= $3)`, ids, users, since).Scan(&found)
	if err != nil || !found {
		return nil, s.errOf(err)
	}
	var out []api.Attributed
	err = s.tx(ctx, func(tx pgx.Tx) error {
		out = out[:0]
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('recsys attribute ' || current_schema()))`); err != nil {
			return err
		}
		for _, t := range touches {
			imp, pos, ok, err := findImpression(ctx, tx, t, window)
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
			var old int16
			err = tx.QueryRow(ctx, `SELECT flags FROM attributions WHERE id = $1 AND position = $2`, imp.ID, pos).Scan(&old)
			if err != nil && err != pgx.ErrNoRows {
				return err
			}
			flags, d, a, ok := record.Credited(imp, pos, byte(old), t.Conversion)
			if !ok {
				continue
			}
			if _, err := tx.Exec(ctx, `INSERT INTO attributions (id, position, flags) VALUES ($1, $2, $3)
				ON CONFLICT (id, position) DO UPDATE SET flags = $3`, imp.ID, pos, int16(flags)); err != nil {
				return err
			}
			if err := addOnline(ctx, tx, api.OnlineCount{Day: record.OnlineDay(imp.At), Model: imp.Model,
				Experiment: imp.Experiment, Arm: imp.Arm, Placement: imp.Placement}, d); err != nil {
				return err
			}
			out = append(out, a)
		}
		return nil
	})
	return out, err
}

// PruneImpressions deletes the oldest lists shown before before, at most
// limit, and their attributions (api.OnlineStore). Ids start with their
// time, so the primary keys' order is the log's.
func (s *Store) PruneImpressions(ctx context.Context, before time.Time, limit int) (int, error) {
	if limit <= 0 || before.UnixNano() <= 0 {
		return 0, nil
	}
	n := 0
	err := s.tx(ctx, func(tx pgx.Tx) error {
		n = 0
		// One replica prunes at a time; the others find nothing to do.
		var mine bool
		if err := tx.QueryRow(ctx, `SELECT pg_try_advisory_xact_lock(hashtext('recsys prune ' || current_schema()))`).Scan(&mine); err != nil || !mine {
			return err
		}
		var last *string // the newest id to delete
		if err := tx.QueryRow(ctx, `SELECT max(id) FROM (SELECT id FROM impressions WHERE id < $1 ORDER BY id LIMIT $2) oldest`,
			api.RecommendationIDsBefore(before), limit).Scan(&last); err != nil || last == nil {
			return err
		}
		tag, err := tx.Exec(ctx, `DELETE FROM impressions WHERE id <= $1`, *last)
		if err != nil {
			return err
		}
		n = int(tag.RowsAffected())
		_, err = tx.Exec(ctx, `DELETE FROM attributions WHERE id <= $1`, *last)
		return err
	})
	return n, s.errOf(err)
}

// OnlineCounts lists the counters of the days from..to (YYYY-MM-DD).
func (s *Store) OnlineCounts(ctx context.Context, from, to string) ([]api.OnlineCount, error) {
	rows, _ := s.pool.Query(ctx, `SELECT day, model, experiment, arm, placement, lists, impressions, clicks, conversions
		FROM online_counts WHERE day BETWEEN $1 AND $2 ORDER BY day, model, experiment, arm, placement`, from, to)
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (api.OnlineCount, error) {
		var c api.OnlineCount
		err := row.Scan(&c.Day, &c.Model, &c.Experiment, &c.Arm, &c.Placement, &c.Lists, &c.Impressions, &c.Clicks, &c.Conversions)
		return c, err
	})
	return out, s.errOf(err)
}

// CreateExperiment stores e with a fresh id, unless one is running (the
// unique index experiments_one_running decides between replicas).
func (s *Store) CreateExperiment(ctx context.Context, e api.Experiment) (api.Experiment, error) {
	err := s.tx(ctx, func(tx pgx.Tx) error {
		var run string
		err := tx.QueryRow(ctx, `SELECT id FROM experiments WHERE running`).Scan(&run)
		if err == nil {
			return record.RunningConflict(run)
		}
		if err != pgx.ErrNoRows {
			return err
		}
		n, err := nextSeq(ctx, tx, "experiment_seq", 1)
		if err != nil {
			return err
		}
		e.ID, e.StoppedAt = fmt.Sprintf("x%06d", n), time.Time{}
		v, err := record.EncodeExperiment(e)
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO experiments (id, running, record) VALUES ($1, true, $2)`, e.ID, v)
		return err
	})
	if isUniqueViolation(err) {
		return e, api.Errorf(api.CodeConflict, "another experiment started at the same time: only one experiment may assign users at a time")
	}
	return e, err
}

// Experiment reads one experiment.
func (s *Store) Experiment(ctx context.Context, id string) (api.Experiment, error) {
	var v []byte
	err := s.pool.QueryRow(ctx, `SELECT record FROM experiments WHERE id = $1`, id).Scan(&v)
	if err == pgx.ErrNoRows {
		return api.Experiment{}, notFound("experiment", id)
	}
	if err != nil {
		return api.Experiment{}, s.errOf(err)
	}
	return record.DecodeExperiment(id, v)
}

// Experiments lists every experiment, newest first.
func (s *Store) Experiments(ctx context.Context) ([]api.Experiment, error) {
	rows, _ := s.pool.Query(ctx, `SELECT id, record FROM experiments ORDER BY id DESC`)
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (api.Experiment, error) {
		var id string
		var v []byte
		if err := row.Scan(&id, &v); err != nil {
			return api.Experiment{}, err
		}
		return record.DecodeExperiment(id, v)
	})
	return out, s.errOf(err)
}

// StopExperiment stops a running experiment.
func (s *Store) StopExperiment(ctx context.Context, id string, at time.Time) (api.Experiment, error) {
	var e api.Experiment
	err := s.tx(ctx, func(tx pgx.Tx) error {
		var v []byte
		err := tx.QueryRow(ctx, `SELECT record FROM experiments WHERE id = $1 FOR UPDATE`, id).Scan(&v)
		if err == pgx.ErrNoRows {
			return notFound("experiment", id)
		}
		if err != nil {
			return err
		}
		if e, err = record.DecodeExperiment(id, v); err != nil || !e.Running() {
			return err
		}
		e.StoppedAt = at.UTC()
		if v, err = record.EncodeExperiment(e); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE experiments SET running = false, record = $2 WHERE id = $1`, id, v)
		return err
	})
	return e, err
}

// isUniqueViolation reports a unique index refusing a row.
func isUniqueViolation(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}
