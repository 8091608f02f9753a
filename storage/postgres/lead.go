package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/recsys-engine/recsys/api"
)

// leaderLock is the session advisory lock the training leader holds, one
// per schema so that databases (and test schemas) elect apart.
const leaderLock = `hashtext('recsys leader ' || current_schema())`

// lease is the connection that holds the leader lock: the lock lives as
// long as the session, so a process that dies (even by SIGKILL) loses it
// when the server sees the connection close. It is a connection of its
// own, outside the pool, so that requests keep every pooled one.
type lease struct {
	mu   sync.Mutex
	conn *pgx.Conn
}

// TryLead takes the leader lock if no other process holds it and reports
// whether this process holds it now. Called again while leading, it checks
// that the lock's connection is still alive: a broken connection (the
// server restarted, or ended the session) has lost the lock, and TryLead
// then tries to take it again on a new one. Each call gives up after
// leaseTimeout, so that a connection that hangs (a network fault) counts as
// lost rather than blocking the leader.
func (s *Store) TryLead(ctx context.Context) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, leaseTimeout)
	defer cancel()
	s.lead.mu.Lock()
	defer s.lead.mu.Unlock()
	if c := s.lead.conn; c != nil {
		if err := c.Ping(ctx); err == nil {
			return true, nil
		}
		s.lead.conn = nil
		_ = c.Close(context.Background())
	}
	c, err := s.connect(ctx, "leader lock")
	if err != nil {
		return false, s.errOf(err)
	}
	var ok bool
	if err := c.QueryRow(ctx, `SELECT pg_try_advisory_lock(`+leaderLock+`)`).Scan(&ok); err != nil || !ok {
		_ = c.Close(context.Background())
		return false, s.errOf(err)
	}
	s.lead.conn = c
	return true, nil
}

// leaseTimeout bounds one check of the leader lock.
const leaseTimeout = 5 * time.Second

// connect opens a connection outside the pool (the leader lock, the
// LISTEN), named in pg_stat_activity "recsys <role> (pid N)" so that an
// operator sees which process holds what.
func (s *Store) connect(ctx context.Context, role string) (*pgx.Conn, error) {
	cfg := s.pool.Config().ConnConfig.Copy()
	cfg.RuntimeParams["application_name"] = fmt.Sprintf("recsys %s (pid %d)", role, os.Getpid())
	return pgx.ConnectConfig(ctx, cfg)
}

// resign ends the leader's session, which releases the lock.
func (s *Store) resign() {
	s.lead.mu.Lock()
	defer s.lead.mu.Unlock()
	if c := s.lead.conn; c != nil {
		s.lead.conn = nil
		_ = c.Close(context.Background())
	}
}

// JobsChannel carries "queued <job id>" from the replica that queued a job
// (AnnounceQueued) and "cancel <job id>" from the replica asked to cancel a
// running job (RequestCancel) to the leader.
const JobsChannel = "recsys_jobs"

// AnnounceQueued tells the leader that job id is queued, so that it need
// not wait for its next poll.
func (s *Store) AnnounceQueued(ctx context.Context, id string) error {
	_, err := s.pool.Exec(ctx, `SELECT pg_notify($1, $2)`, JobsChannel, "queued "+id)
	return s.errOf(err)
}

// RequestCancel asks the replica running job id to cancel it: a
// notification, which it hears at once if its LISTEN connection is up, and
// a mark in the job's row, which it reads every few seconds
// (CancelRequested) in case the notification was lost.
func (s *Store) RequestCancel(ctx context.Context, id string) error {
	return s.tx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `UPDATE jobs SET cancel_requested = true WHERE id = $1 AND state = $2`, id, api.JobRunning); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `SELECT pg_notify($1, $2)`, JobsChannel, "cancel "+id)
		return err
	})
}

// CancelRequested reports whether RequestCancel was called for job id.
func (s *Store) CancelRequested(ctx context.Context, id string) (bool, error) {
	var yes bool
	err := s.pool.QueryRow(ctx, `SELECT cancel_requested FROM jobs WHERE id = $1`, id).Scan(&yes)
	if err == pgx.ErrNoRows {
		return false, nil
	}
	return yes, s.errOf(err)
}

// QueueJob stores job j, queued. With exclusive set it first looks for a
// training job queued or running and, if there is one, returns it and
// stores nothing; the look and the insert hold a lock of the queue, so of
// two replicas asked at once only one queues.
func (s *Store) QueueJob(ctx context.Context, j api.Job, exclusive bool) (pending *api.Job, err error) {
	b, err := json.Marshal(j)
	if err != nil {
		return nil, err
	}
	err = s.tx(ctx, func(tx pgx.Tx) error {
		pending = nil
		if exclusive {
			if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('recsys queue ' || current_schema()))`); err != nil {
				return err
			}
			var rec []byte
			err := tx.QueryRow(ctx, `SELECT record FROM jobs WHERE state IN ($1, $2) AND record->>'kind' = $3 ORDER BY id LIMIT 1`,
				api.JobQueued, api.JobRunning, api.JobTrain).Scan(&rec)
			if err == nil {
				var p api.Job
				if err := json.Unmarshal(rec, &p); err != nil {
					return err
				}
				pending = &p
				return nil
			}
			if err != pgx.ErrNoRows {
				return err
			}
		}
		_, err := tx.Exec(ctx, `INSERT INTO jobs (id, state, record) VALUES ($1, $2, $3)`, j.ID, j.State, b)
		return err
	})
	return pending, err
}

// Watch calls heard with every notification on NotifyChannel (a model
// stored or activated by any replica) and JobsChannel, and with an empty
// channel after every (re)connection, since notifications sent while no
// connection listened are lost. It returns when ctx is done.
func (s *Store) Watch(ctx context.Context, heard func(channel, payload string)) {
	for ctx.Err() == nil {
		c, err := s.connect(ctx, "listen")
		if err == nil {
			if _, err = c.Exec(ctx, `LISTEN `+NotifyChannel+`; LISTEN `+JobsChannel); err == nil {
				heard("", "")
				for err == nil {
					var n *pgconn.Notification
					if n, err = c.WaitForNotification(ctx); err == nil {
						heard(n.Channel, n.Payload)
					}
				}
			}
			_ = c.Close(context.Background())
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

// PendingJobs lists the queued and running jobs, oldest first.
func (s *Store) PendingJobs(ctx context.Context) ([]api.Job, error) {
	rows, _ := s.pool.Query(ctx, `SELECT record FROM jobs WHERE state IN ($1, $2) ORDER BY id`, api.JobQueued, api.JobRunning)
	var out []api.Job
	var b []byte
	_, err := pgx.ForEachRow(rows, []any{&b}, func() error {
		var j api.Job
		if err := json.Unmarshal(b, &j); err != nil {
			return err
		}
		out = append(out, j)
		return nil
	})
	return out, s.errOf(err)
}

// ClaimQueuedJob takes the oldest queued job: its state becomes running in
// the same statement, so that a concurrent cancel either drops it first or
// finds it running. The statement runs on the session that holds the
// leader lock, so only the leader claims: a replica whose lock session
// ended (the server restarted, or ended it) claims nothing, even before
// TryLead notices. ok is false when no job is queued or this process does
// not lead.
func (s *Store) ClaimQueuedJob(ctx context.Context) (j api.Job, ok bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, leaseTimeout)
	defer cancel()
	s.lead.mu.Lock()
	defer s.lead.mu.Unlock()
	c := s.lead.conn
	if c == nil {
		return j, false, nil
	}
	var b []byte
	err = c.QueryRow(ctx, `UPDATE jobs SET state = $2 WHERE id =
		(SELECT id FROM jobs WHERE state = $1 ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING record`,
		api.JobQueued, api.JobRunning).Scan(&b)
	if err == pgx.ErrNoRows {
		return j, false, nil
	}
	if err != nil {
		if c.IsClosed() {
			s.lead.conn = nil // the lock went with the session
		}
		return j, false, s.errOf(err)
	}
	if err := json.Unmarshal(b, &j); err != nil {
		return j, false, err
	}
	j.State = api.JobRunning
	return j, true, nil
}

// CancelQueuedJob marks job id cancelled if it is still queued; ok is false
// when it is not (it runs, ended, or does not exist).
func (s *Store) CancelQueuedJob(ctx context.Context, id, reason string) (j api.Job, ok bool, err error) {
	err = s.tx(ctx, func(tx pgx.Tx) error {
		var b []byte
		err := tx.QueryRow(ctx, `SELECT record FROM jobs WHERE id = $1 AND state = $2 FOR UPDATE`, id, api.JobQueued).Scan(&b)
		if err == pgx.ErrNoRows {
			return nil
		}
		if err != nil {
			return err
		}
		if err := json.Unmarshal(b, &j); err != nil {
			return err
		}
		now := s.now().UTC()
		j.State, j.FinishedAt, j.Error = api.JobCancelled, &now, reason
		v, err := json.Marshal(j)
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE jobs SET state = $2, record = $3 WHERE id = $1`, id, j.State, v)
		ok = err == nil
		return err
	})
	return j, ok, err
}
