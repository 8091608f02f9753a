package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// ensureSchema gives the migrations a schema to create their tables in.
// When the search path names no schema that exists, the first one the
// DSN's search_path names is created, as a user of `serve --db
// postgres://...?search_path=recsys` on a fresh database expects; without
// a search_path in the DSN (the server's default path has no schema left)
// the error says how to name one.
func ensureSchema(ctx context.Context, tx pgx.Tx, searchPath string) error {
	var current *string
	if err := tx.QueryRow(ctx, `SELECT current_schema()`).Scan(&current); err != nil {
		return err
	}
	if current != nil {
		return nil
	}
	name := firstSchema(searchPath)
	if name == "" {
		var path string
		if err := tx.QueryRow(ctx, `SHOW search_path`).Scan(&path); err != nil {
			return err
		}
		return fmt.Errorf("no schema of the search path (%s) exists to create the tables in: "+
			"name one in the URL (postgres://.../db?search_path=recsys), which recsys creates", path)
	}
	// Replicas starting together on a new schema create it once.
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('recsys create schema ' || $1))`, name); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS `+pgx.Identifier{name}.Sanitize()); err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "42501" { // insufficient_privilege
			return fmt.Errorf("schema %q (search_path) does not exist and this user may not create it: "+
				"create it as a user who may (CREATE SCHEMA %s AUTHORIZATION <this user>), or name an existing one", name, pgx.Identifier{name}.Sanitize())
		}
		return fmt.Errorf("creating schema %q (search_path): %w", name, err)
	}
	if err := tx.QueryRow(ctx, `SELECT current_schema()`).Scan(&current); err != nil {
		return err
	}
	if current == nil || *current != name {
		return fmt.Errorf("created schema %q, but the search path (%s) does not select it", name, searchPath)
	}
	return nil
}

// firstSchema is the first schema a search_path setting names, as
// PostgreSQL reads it: a double-quoted name as written ("" inside it for a
// quote), an unquoted one in lower case; "" for none, and for $user, which
// names a schema after the connecting user only when one exists.
func firstSchema(path string) string {
	path = strings.TrimSpace(path)
	if strings.HasPrefix(path, `"`) {
		var b strings.Builder
		for i := 1; i < len(path); i++ {
			if path[i] != '"' {
				b.WriteByte(path[i])
				continue
			}
			if i+1 < len(path) && path[i+1] == '"' {
				b.WriteByte('"')
				i++
				continue
			}
			if name := b.String(); name != "$user" {
				return name
			}
			return ""
		}
		return "" // no closing quote: PostgreSQL would refuse the setting
	}
	name, _, _ := strings.Cut(path, ",")
	name = strings.ToLower(strings.TrimSpace(name))
	if name == "$user" {
		return ""
	}
	return name
}

// StoredSchema is the schema version the database holds: SchemaVersion
// after Open, or a newer one another replica's newer binary has applied
// since.
func (s *Store) StoredSchema(ctx context.Context) (int, error) {
	var v int
	err := s.pool.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&v)
	return v, s.errOf(err)
}

// DatabaseSchema reads the schema version of the database at dsn without
// opening it as a store: nothing is created or migrated. A database (or
// schema) recsys has not opened yet has version 0.
func DatabaseSchema(ctx context.Context, dsn string) (int, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return 0, fmt.Errorf("--db %s: the URL does not parse (postgres://user:pass@host:port/db)", Redact(dsn))
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = 5 * time.Second
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return 0, fmt.Errorf("postgres %s:%d/%s: %w", cfg.Host, cfg.Port, cfg.Database, err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var v int
	err = conn.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&v)
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "42P01" { // undefined_table
		return 0, nil
	}
	return v, err
}
