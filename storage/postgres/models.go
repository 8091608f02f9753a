package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/storage/record"
)

// NotifyChannel is the channel PutModel and SetActiveModel notify (payload
// "model <name> <version>" or "active <name>"), so that replicas can load
// a new model without polling.
const NotifyChannel = "recsys_models"

// chunkSize is the largest piece of a model blob in one row: PostgreSQL
// caps a value at 1 GB, and smaller rows keep each message to the server
// short.
const chunkSize = 1 << 20

// NewModelVersion returns a fresh, increasing version string.
func (s *Store) NewModelVersion(ctx context.Context) (string, error) {
	return s.newName(ctx, "model_seq", "v%06d")
}

// newName formats the next number of a sequence counter; the zero padding
// makes name order age order.
func (s *Store) newName(ctx context.Context, seq, format string) (string, error) {
	var n int64
	err := s.tx(ctx, func(tx pgx.Tx) (err error) {
		n, err = nextSeq(ctx, tx, seq, 1)
		return err
	})
	return fmt.Sprintf(format, n), err
}

// PutModel stores a model version, its blob sealed with a checksum and cut
// into chunks, and drops all but the newest record.KeepVersions of that
// name.
func (s *Store) PutModel(ctx context.Context, info api.ModelInfo, blob []byte) error {
	info.Bytes = len(blob)
	info.Active = false
	meta, err := json.Marshal(info)
	if err != nil {
		return err
	}
	return s.tx(ctx, func(tx pgx.Tx) error {
		if info.JobID != "" {
			// A job that another replica has ended (the new leader failed
			// it) stores no model: lock its row, so that it cannot end
			// while the model is stored.
			var state string
			err := tx.QueryRow(ctx, `SELECT state FROM jobs WHERE id = $1 FOR SHARE`, info.JobID).Scan(&state)
			if err != nil && err != pgx.ErrNoRows {
				return err
			}
			if err == nil && state != api.JobRunning {
				return jobEnded(ctx, tx, info.JobID)
			}
		}
		if _, err := tx.Exec(ctx, `DELETE FROM models WHERE name = $1 AND version = $2`, info.Name, info.Version); err != nil {
			return err
		}
		if err := insertModel(ctx, tx, info.Name, info.Version, meta, record.Seal(blob)); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM models WHERE name = $1 AND version NOT IN
			(SELECT version FROM models WHERE name = $1 ORDER BY version DESC LIMIT $2)`, info.Name, record.KeepVersions); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `SELECT pg_notify($1, $2)`, NotifyChannel, "model "+info.Name+" "+info.Version)
		return err
	})
}

// insertModel stores a model record and its sealed blob in chunks.
func insertModel(ctx context.Context, tx pgx.Tx, name, version string, info, sealed []byte) error {
	if _, err := tx.Exec(ctx, `INSERT INTO models (name, version, info) VALUES ($1, $2, $3)`, name, version, info); err != nil {
		return err
	}
	var chunks [][]any
	for k := 0; k == 0 || k*chunkSize < len(sealed); k++ {
		chunks = append(chunks, []any{name, version, int32(k), sealed[k*chunkSize : min((k+1)*chunkSize, len(sealed))]})
	}
	_, err := tx.CopyFrom(ctx, pgx.Identifier{"model_chunks"}, []string{"name", "version", "seq", "data"}, pgx.CopyFromRows(chunks))
	return err
}

// Models lists every stored version, newest first within a name; Active
// marks the newest version of the active model.
func (s *Store) Models(ctx context.Context) ([]api.ModelInfo, error) {
	var out []api.ModelInfo
	err := s.read(ctx, func(tx pgx.Tx) error {
		active, err := setting(ctx, tx, "active_model")
		if err != nil {
			return err
		}
		rows, _ := tx.Query(ctx, `SELECT info FROM models ORDER BY name, version DESC`)
		var b []byte
		_, err = pgx.ForEachRow(rows, []any{&b}, func() error {
			var info api.ModelInfo
			if err := json.Unmarshal(b, &info); err != nil {
				return fmt.Errorf("model record: %w", err)
			}
			info.Active = info.Name == active && (len(out) == 0 || out[len(out)-1].Name != info.Name)
			out = append(out, info)
			return nil
		})
		return err
	})
	// The order of Go strings, as the bbolt store sorts.
	sort.SliceStable(out, func(a, b int) bool {
		if out[a].Name != out[b].Name {
			return out[a].Name < out[b].Name
		}
		return out[a].Version > out[b].Version
	})
	return out, err
}

// ModelBlob reads one persisted model.
func (s *Store) ModelBlob(ctx context.Context, name, version string) ([]byte, error) {
	var sealed []byte
	found := false
	err := s.read(ctx, func(tx pgx.Tx) error {
		rows, _ := tx.Query(ctx, `SELECT data FROM model_chunks WHERE name = $1 AND version = $2 ORDER BY seq`, name, version)
		var b []byte
		_, err := pgx.ForEachRow(rows, []any{&b}, func() error {
			found = true
			sealed = append(sealed, b...)
			return nil
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, api.Errorf(api.CodeNotFound, "model %s version %s not found", name, version)
	}
	blob, err := record.Unseal(sealed)
	if err != nil {
		return nil, fmt.Errorf("model %s version %s: %w", name, version, err)
	}
	return blob, nil
}

// SetActiveModel makes name the model that answers by default.
func (s *Store) SetActiveModel(ctx context.Context, name string) error {
	return s.tx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO settings (name, value) VALUES ('active_model', $1)
			ON CONFLICT (name) DO UPDATE SET value = excluded.value`, name); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `SELECT pg_notify($1, $2)`, NotifyChannel, "active "+name)
		return err
	})
}

// ActiveModel returns the active model's name, "" when none.
func (s *Store) ActiveModel(ctx context.Context) (string, error) {
	var name string
	err := s.read(ctx, func(tx pgx.Tx) (err error) {
		name, err = setting(ctx, tx, "active_model")
		return err
	})
	return name, err
}

func setting(ctx context.Context, tx pgx.Tx, name string) (string, error) {
	var v string
	err := tx.QueryRow(ctx, `SELECT value FROM settings WHERE name = $1`, name).Scan(&v)
	if err == pgx.ErrNoRows {
		return "", nil
	}
	return v, err
}

// NewJobID returns a fresh job id.
func (s *Store) NewJobID(ctx context.Context) (string, error) {
	return s.newName(ctx, "job_seq", "j%012d")
}

// PutJob creates or replaces a job record, unless the stored record has
// ended (succeeded, failed, cancelled): an ended job stays as it ended, and
// the write is refused as a conflict. That is how a replica that lost the
// leader lock learns that the new leader has failed its job, and cannot
// bring it back to running or succeeded.
func (s *Store) PutJob(ctx context.Context, j api.Job) error {
	b, err := json.Marshal(j)
	if err != nil {
		return err
	}
	return s.tx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `INSERT INTO jobs (id, state, record) VALUES ($1, $2, $3)
			ON CONFLICT (id) DO UPDATE SET state = excluded.state, record = excluded.record
			WHERE jobs.state NOT IN ($4, $5, $6)`, j.ID, j.State, b, api.JobSucceeded, api.JobFailed, api.JobCancelled)
		if err != nil || tag.RowsAffected() == 1 {
			return err
		}
		return jobEnded(ctx, tx, j.ID)
	})
}

// jobEnded is the conflict of a write to job id, which has ended.
func jobEnded(ctx context.Context, tx pgx.Tx, id string) error {
	var state string
	if err := tx.QueryRow(ctx, `SELECT state FROM jobs WHERE id = $1`, id).Scan(&state); err != nil {
		return err
	}
	return api.Errorf(api.CodeConflict, "job %s already ended (%s)", id, state)
}

// Job reads one job record.
func (s *Store) Job(ctx context.Context, id string) (api.Job, error) {
	var j api.Job
	var b []byte
	err := s.pool.QueryRow(ctx, `SELECT record FROM jobs WHERE id = $1`, id).Scan(&b)
	if err == pgx.ErrNoRows {
		return j, api.Errorf(api.CodeNotFound, "job %q not found", id)
	}
	if err != nil {
		return j, s.errOf(err)
	}
	return j, json.Unmarshal(b, &j)
}

// Jobs lists up to limit jobs, newest first.
func (s *Store) Jobs(ctx context.Context, limit int) ([]api.Job, error) {
	rows, _ := s.pool.Query(ctx, `SELECT id, record FROM jobs ORDER BY id DESC LIMIT $1`, limit)
	var out []api.Job
	var id string
	var b []byte
	_, err := pgx.ForEachRow(rows, []any{&id, &b}, func() error {
		var j api.Job
		if err := json.Unmarshal(b, &j); err != nil {
			return fmt.Errorf("job record %q: %w", id, err)
		}
		out = append(out, j)
		return nil
	})
	return out, s.errOf(err)
}

// RecoverJobs marks every running job failed with reason and returns the
// queued ones, oldest first, for a process that is the store's only user
// (replicas share the queue instead: the leader fails only its lost
// predecessor's running jobs, and the queued ones stay in the table).
func (s *Store) RecoverJobs(ctx context.Context, reason string) ([]api.Job, int, error) {
	n, err := s.FailJobs(ctx, []string{api.JobRunning}, reason)
	if err != nil {
		return nil, 0, err
	}
	queued, err := s.PendingJobs(ctx)
	return slices.DeleteFunc(queued, func(j api.Job) bool { return j.State != api.JobQueued }), n, err
}

// FailJobs marks every job in one of states failed, with reason.
func (s *Store) FailJobs(ctx context.Context, states []string, reason string) (int, error) {
	n := 0
	now := s.now().UTC()
	err := s.tx(ctx, func(tx pgx.Tx) error {
		rows, _ := tx.Query(ctx, `SELECT record FROM jobs WHERE state = ANY($1) ORDER BY id FOR UPDATE`, states)
		var fixed []api.Job
		var b []byte
		if _, err := pgx.ForEachRow(rows, []any{&b}, func() error {
			var j api.Job
			if json.Unmarshal(b, &j) != nil {
				return nil // an unreadable record is left for an operator
			}
			j.State, j.Error, j.FinishedAt = api.JobFailed, reason, &now
			fixed = append(fixed, j)
			return nil
		}); err != nil {
			return err
		}
		for _, j := range fixed {
			v, err := json.Marshal(j)
			if err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `UPDATE jobs SET state = $2, record = $3 WHERE id = $1`, j.ID, j.State, v); err != nil {
				return err
			}
		}
		n = len(fixed)
		return nil
	})
	return n, err
}

// PutReport stores a report, giving it an id and a time when it has none.
func (s *Store) PutReport(ctx context.Context, r *api.Report) error {
	if r.ID == "" {
		id, err := s.newName(ctx, "report_seq", "r%012d")
		if err != nil {
			return err
		}
		r.ID = id
	}
	if r.CreatedAt.IsZero() {
		r.CreatedAt = s.now().UTC().Truncate(time.Millisecond)
	}
	v, err := json.Marshal(r)
	if err != nil {
		return err
	}
	_, err = s.pool.Exec(ctx, `INSERT INTO reports (id, record) VALUES ($1, $2)
		ON CONFLICT (id) DO UPDATE SET record = excluded.record`, r.ID, v)
	return s.errOf(err)
}

// Report reads one report.
func (s *Store) Report(ctx context.Context, id string) (*api.Report, error) {
	var b []byte
	err := s.pool.QueryRow(ctx, `SELECT record FROM reports WHERE id = $1`, id).Scan(&b)
	if err == pgx.ErrNoRows {
		return nil, api.Errorf(api.CodeNotFound, "evaluation %q not found", id)
	}
	if err != nil {
		return nil, s.errOf(err)
	}
	var r api.Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// Reports lists every report, newest first.
func (s *Store) Reports(ctx context.Context) ([]*api.Report, error) {
	rows, _ := s.pool.Query(ctx, `SELECT id, record FROM reports ORDER BY id DESC`)
	var out []*api.Report
	var id string
	var b []byte
	_, err := pgx.ForEachRow(rows, []any{&id, &b}, func() error {
		var r api.Report
		if err := json.Unmarshal(b, &r); err != nil {
			return fmt.Errorf("report %q: %w", id, err)
		}
		out = append(out, &r)
		return nil
	})
	return out, s.errOf(err)
}
