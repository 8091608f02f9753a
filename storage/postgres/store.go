// Package postgres is the PostgreSQL store of recsys: the same services as
// the bbolt store (storage), on a server that several replicas share.
//
// Every read gives the answer the bbolt store gives (storage/storagetest
// runs one contract suite over both): events fold into pair records through
// record.Fold, dense indices come from gap-free counters, timestamps are
// Unix nanoseconds and ids compare byte-wise. The schema is in
// migrations/*.sql, applied in order at Open in one transaction.
//
// Writes of data (events, items, users) lock one row ("writer" in counters)
// first, so they apply one at a time as bbolt's do; every write is one
// transaction, committed before the call returns. Reads take no lock; the
// training snapshot and the catalogue are each one REPEATABLE READ
// transaction.
//
// Several serve processes may share one database (docs/design.md#replicas):
// lead.go holds the training leader's lock, the queue's claims and the
// LISTEN connection; Refresh follows the other processes' writes.
package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/storage/backend"
)

// Options configure a Store.
type Options struct {
	// Policy derives relevance from events; the zero value means
	// api.DefaultPolicy().
	Policy api.Policy
	// Now returns the server time for events without a timestamp.
	Now func() time.Time
}

// Store is the PostgreSQL store. It is safe for concurrent use.
type Store struct {
	pool   *pgxpool.Pool
	policy api.Policy
	now    func() time.Time

	itemsVersion  atomic.Uint64
	eventsVersion atomic.Uint64

	// seenWrites and seenCatalogue are the write counts Refresh saw last.
	seenWrites    atomic.Int64
	seenCatalogue atomic.Int64

	lead lease // the training leader's lock, when this process holds it
}

// IsDSN reports whether db names a PostgreSQL server rather than a file.
func IsDSN(db string) bool {
	return strings.HasPrefix(db, "postgres://") || strings.HasPrefix(db, "postgresql://")
}

// Open connects to the server at dsn (postgres://user:pass@host:port/db)
// and brings its schema to SchemaVersion.
func Open(ctx context.Context, dsn string, opts Options) (*Store, error) {
	if opts.Policy.Types == nil {
		opts.Policy = api.DefaultPolicy()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("--db %s: the URL does not parse (postgres://user:pass@host:port/db)", Redact(dsn))
	}
	// A write is answered only once it is on disk: every setting but off
	// flushes the commit locally, and a server configured with off is
	// overridden for our connections.
	switch sc := cfg.ConnConfig.RuntimeParams["synchronous_commit"]; sc {
	case "":
		cfg.ConnConfig.RuntimeParams["synchronous_commit"] = "on"
	case "off":
		return nil, fmt.Errorf("--db %s: synchronous_commit=off would answer writes before they are durable", Redact(dsn))
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = 5 * time.Second
	}
	where := fmt.Sprintf("%s:%d/%s", cfg.ConnConfig.Host, cfg.ConnConfig.Port, cfg.ConnConfig.Database)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres %s: %w", where, err)
	}
	s := &Store{pool: pool, policy: opts.Policy, now: opts.Now}
	if err := s.migrate(ctx, cfg.ConnConfig.RuntimeParams["search_path"]); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres %s: %w", where, err)
	}
	return s, nil
}

// Redact replaces the passwords of a postgres:// URL with "xxxxx", for
// output and logs: the one in the user information and any query
// parameter naming one (password, sslpassword). A URL that does not parse
// cleanly, where the password's end cannot be told, is not shown at all.
// Anything else (a bbolt file) is returned as it is, but for the value of
// a password= in it: a keyword/value connection string given where a URL
// belongs.
func Redact(db string) string {
	if !IsDSN(db) {
		return keywordPassword.ReplaceAllString(db, "${1}xxxxx")
	}
	scheme, _, _ := strings.Cut(db, "://")
	u, err := url.Parse(db)
	if err != nil || u.User == nil && strings.Contains(db, "@") {
		return scheme + "://(a URL that does not parse, not shown)"
	}
	if q := u.Query(); len(q) > 0 {
		masked := false
		for k := range q {
			if strings.Contains(strings.ToLower(k), "password") {
				q.Set(k, "xxxxx")
				masked = true
			}
		}
		if masked {
			u.RawQuery = q.Encode()
		}
	}
	return u.Redacted()
}

// keywordPassword is the password of a keyword/value connection string.
var keywordPassword = regexp.MustCompile(`(?i)(\b\w*password\s*=\s*)('(?:[^'\\]|\\.)*'|\S*)`)

//go:embed migrations/*.sql
var migrations embed.FS

// SchemaVersion is the newest migration this binary knows.
var SchemaVersion = len(mustMigrations())

type migration struct {
	version int
	name    string
	sql     string
}

// mustMigrations reads the embedded migrations, named NNN_what.sql and
// numbered 1, 2, … without gaps.
func mustMigrations() []migration {
	entries, err := fs.ReadDir(migrations, "migrations")
	if err != nil {
		panic(err)
	}
	var out []migration
	for _, e := range entries {
		v, err := strconv.Atoi(strings.SplitN(e.Name(), "_", 2)[0])
		if err != nil {
			panic("migration " + e.Name() + ": no version number")
		}
		b, err := migrations.ReadFile("migrations/" + e.Name())
		if err != nil {
			panic(err)
		}
		out = append(out, migration{version: v, name: e.Name(), sql: string(b)})
	}
	sort.Slice(out, func(a, b int) bool { return out[a].version < out[b].version })
	for k, m := range out {
		if m.version != k+1 {
			panic(fmt.Sprintf("migration %s: want version %d", m.name, k+1))
		}
	}
	return out
}

// migrate applies the missing migrations in one transaction, under a lock
// of the schema so that replicas starting together apply them once, and
// refuses a database whose schema is newer than this binary. searchPath is
// the DSN's search_path ("" when it names none): a schema it names first
// that does not exist yet is created.
func (s *Store) migrate(ctx context.Context, searchPath string) error {
	return s.tx(ctx, func(tx pgx.Tx) error {
		if err := ensureSchema(ctx, tx, searchPath); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('recsys migrate ' || current_schema()))`); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
			version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
			return err
		}
		var have int
		if err := tx.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&have); err != nil {
			return err
		}
		all := mustMigrations()
		if have > len(all) {
			return fmt.Errorf("database schema version %d is newer than this binary's %d; run a newer recsys", have, len(all))
		}
		for _, m := range all[have:] {
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return fmt.Errorf("migration %s: %w", m.name, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`, m.version, m.name); err != nil {
				return err
			}
		}
		return nil
	})
}

// Close closes the connections.
func (s *Store) Close() error { s.resign(); s.pool.Close(); return nil }

// Policy is the relevance policy the store applies.
func (s *Store) Policy() api.Policy { return s.policy }

// Versions tell a cache whether the catalogue or the interactions changed
// through this process, or, as far as Refresh saw, through another.
func (s *Store) Versions() (items, events uint64) {
	return s.itemsVersion.Load(), s.eventsVersion.Load()
}

// Size is the size of the database in bytes (0 when it cannot be read).
func (s *Store) Size() int64 {
	var n int64
	_ = s.pool.QueryRow(context.Background(), `SELECT pg_database_size(current_database())`).Scan(&n)
	return n
}

// tx runs fn in a READ COMMITTED transaction and commits it.
func (s *Store) tx(ctx context.Context, fn func(pgx.Tx) error) error {
	return s.errOf(pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{}, fn))
}

// write runs fn in a transaction that first takes the writer lock, so data
// writes apply one at a time. Taking it counts the write ("writer" in
// counters), which tells replicas that the data changed (Refresh).
func (s *Store) write(ctx context.Context, fn func(pgx.Tx) error) error {
	return s.writeAs(ctx, false, fn)
}

// writeCatalogue is write for a change of the catalogue (items), which it
// also counts ("catalogue" in counters).
func (s *Store) writeCatalogue(ctx context.Context, fn func(pgx.Tx) error) error {
	return s.writeAs(ctx, true, fn)
}

func (s *Store) writeAs(ctx context.Context, catalogue bool, fn func(pgx.Tx) error) error {
	return s.tx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `UPDATE counters SET value = value + 1 WHERE name = 'writer'`); err != nil {
			return err
		}
		if err := fn(tx); err != nil || !catalogue {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO counters (name, value) VALUES ('catalogue', 1)
			ON CONFLICT (name) DO UPDATE SET value = counters.value + 1`)
		return err
	})
}

// Refresh makes Versions report the writes of other processes on the same
// database: when the counts of writes changed since the last call, it
// moves the versions on, so that caches built from this store rebuild.
// Replicas call it every second or so (docs/design.md#replicas).
func (s *Store) Refresh(ctx context.Context) error {
	var writes, catalogue int64
	if err := s.pool.QueryRow(ctx, `SELECT coalesce(max(value) FILTER (WHERE name = 'writer'), 0),
		coalesce(max(value) FILTER (WHERE name = 'catalogue'), 0) FROM counters WHERE name IN ('writer', 'catalogue')`).Scan(&writes, &catalogue); err != nil {
		return s.errOf(err)
	}
	if s.seenCatalogue.Swap(catalogue) != catalogue {
		s.itemsVersion.Add(1)
	}
	if s.seenWrites.Swap(writes) != writes {
		s.eventsVersion.Add(1)
	}
	return nil
}

// read runs fn in a REPEATABLE READ, read-only transaction: every query in
// it sees the same committed state.
func (s *Store) read(ctx context.Context, fn func(pgx.Tx) error) error {
	return s.errOf(pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, fn))
}

// ErrUnavailable is the error of a call the server could not answer: it
// is down, restarting, or unreachable. The HTTP layer answers it 503.
var ErrUnavailable = &api.Error{Code: api.CodeStorageUnavailable,
	Message: "the database server is unavailable; nothing of this request was stored: retry shortly"}

// errOf maps the failures of an unreachable server to ErrUnavailable and
// a full disk to api.CodeStorageFull; other errors pass as they are.
func (s *Store) errOf(err error) error {
	if err == nil {
		return nil
	}
	var ae *api.Error
	if errors.As(err, &ae) {
		return err
	}
	if unavailable(err) {
		return fmt.Errorf("%w (%v)", ErrUnavailable, err)
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "53100" { // disk_full
		return &api.Error{Code: api.CodeStorageFull, Message: "the database server is out of disk space; nothing of this request was stored: free space and retry"}
	}
	return err
}

// unavailable reports whether err means the server cannot be reached or is
// shutting down, starting up, or out of connections.
func unavailable(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) || pgconn.SafeToRetry(err) || errors.Is(err, pgconn.ErrConnClosed) {
		return true
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case strings.HasPrefix(pe.Code, "08"), // connection exception
			pe.Code == "57P01", pe.Code == "57P02", pe.Code == "57P03", // shutdown, crash, starting up
			pe.Code == "53300": // too many connections
			return true
		}
		return false
	}
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EPIPE)
}

// Counts reads the counters.
func (s *Store) Counts(ctx context.Context) (api.Counts, error) {
	var c api.Counts
	err := s.read(ctx, func(tx pgx.Tx) error {
		m, err := counters(ctx, tx)
		c = api.Counts{Users: m["users"], Items: m["items"], Interactions: m["pairs"],
			Positives: m["positives"], Events: m["events"]}
		return err
	})
	return c, err
}

func counters(ctx context.Context, tx pgx.Tx) (map[string]int64, error) {
	rows, _ := tx.Query(ctx, `SELECT name, value FROM counters`)
	m := map[string]int64{}
	var name string
	var v int64
	_, err := pgx.ForEachRow(rows, []any{&name, &v}, func() error { m[name] = v; return nil })
	return m, err
}

// Activity returns the number of events per UTC day (by event time), oldest
// first, for the most recent days that have any.
func (s *Store) Activity(ctx context.Context, days int) ([]api.DayCount, error) {
	rows, _ := s.pool.Query(ctx, `SELECT day, events FROM (SELECT day, events FROM days WHERE events > 0
		ORDER BY day DESC LIMIT $1) d ORDER BY day`, days)
	var out []api.DayCount
	var day string
	var n int64
	_, err := pgx.ForEachRow(rows, []any{&day, &n}, func() error {
		t, err := time.Parse("20060102", day)
		if err == nil {
			out = append(out, api.DayCount{Day: t.Format(time.DateOnly), Events: n})
		}
		return nil
	})
	return out, s.errOf(err)
}

// addCounters adds deltas to counters, none below zero.
func addCounters(ctx context.Context, tx pgx.Tx, d map[string]int64) error {
	names, vals := make([]string, 0, len(d)), make([]int64, 0, len(d))
	for n, v := range d {
		if v != 0 {
			names, vals = append(names, n), append(vals, v)
		}
	}
	if len(names) == 0 {
		return nil
	}
	_, err := tx.Exec(ctx, `UPDATE counters c SET value = greatest(c.value + v.d, 0)
		FROM unnest($1::text[], $2::bigint[]) AS v(name, d) WHERE c.name = v.name`, names, vals)
	return err
}

// nextSeq takes n numbers from sequence counter name and returns the first.
func nextSeq(ctx context.Context, tx pgx.Tx, name string, n int) (int64, error) {
	var last int64
	err := tx.QueryRow(ctx, `UPDATE counters SET value = value + $2 WHERE name = $1 RETURNING value`, name, n).Scan(&last)
	return last - int64(n) + 1, err
}

func notFound(kind, id string) error {
	return api.Errorf(api.CodeNotFound, "%s %q not found", kind, id)
}

var _ backend.Store = (*Store)(nil)
