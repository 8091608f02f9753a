package postgres_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/storage/postgres"
	"github.com/recsys-engine/recsys/storage/postgres/pgtest"
)

// randomName is a fresh lower-case identifier with the given prefix.
func randomName(prefix string) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// withParams returns dsn with its query parameters set (or, for "",
// deleted) and its user replaced when user is not "".
func withParams(tb testing.TB, dsn, user string, params map[string]string) string {
	tb.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		tb.Fatal(err)
	}
	q := u.Query()
	for k, v := range params {
		if v == "" {
			q.Del(k)
		} else {
			q.Set(k, v)
		}
	}
	u.RawQuery = q.Encode()
	if user != "" {
		u.User = url.User(user)
	}
	return u.String()
}

// admin connects to the test server as the DSN's user.
func admin(tb testing.TB, dsn string) *pgx.Conn {
	tb.Helper()
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func mustExec(tb testing.TB, conn *pgx.Conn, sql string, args ...any) {
	tb.Helper()
	if _, err := conn.Exec(context.Background(), sql, args...); err != nil {
		tb.Fatalf("%s: %v", sql, err)
	}
}

// TestOpen_createsMissingSchema: a DSN whose search_path names a schema
// that does not exist opens: the schema is created and the tables go in
// it (Open used to fail with PostgreSQL's "no schema has been selected to
// create in"). A second Open finds it as it was.
func TestOpen_createsMissingSchema(t *testing.T) {
	base := pgtest.Schema(t)
	conn := admin(t, base)
	name := randomName("t_new_")
	t.Cleanup(func() { _, _ = conn.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+name+" CASCADE") })
	dsn := withParams(t, base, "", map[string]string{"search_path": name})
	ctx := context.Background()
	s, err := postgres.Open(ctx, dsn, postgres.Options{})
	if err != nil {
		t.Fatalf("Open on a missing schema: %v", err)
	}
	if _, err := s.AddInteractions(ctx, []api.Interaction{{UserID: "u1", ItemID: "i1", Type: "view"}}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	var tables int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_tables WHERE schemaname = $1 AND tablename IN ('pairs', 'schema_migrations')`, name).Scan(&tables); err != nil {
		t.Fatal(err)
	}
	if tables != 2 {
		t.Fatalf("schema %s holds %d of the tables pairs and schema_migrations, want 2", name, tables)
	}
	s, err = postgres.Open(ctx, dsn, postgres.Options{})
	if err != nil {
		t.Fatalf("second Open: %v", err)
	}
	defer s.Close()
	c, err := s.Counts(ctx)
	if err != nil || c.Events != 1 || c.Users != 1 {
		t.Fatalf("counts after reopening: %+v, %v; want the one event", c, err)
	}
}

// TestOpen_missingSchemaRefused: a user who may not create the schema its
// search_path names gets an error naming the schema and how to create it;
// with no search_path in the DSN and none of the server's path existing,
// the error says to name one. Neither creates anything.
func TestOpen_missingSchemaRefused(t *testing.T) {
	base := pgtest.Schema(t)
	conn := admin(t, base)
	role, name := randomName("r_"), randomName("t_nope_")
	mustExec(t, conn, "CREATE ROLE "+role+" LOGIN")
	t.Cleanup(func() { _, _ = conn.Exec(context.Background(), "DROP ROLE IF EXISTS "+role) })
	ctx := context.Background()

	dsn := withParams(t, base, role, map[string]string{"search_path": name})
	_, err := postgres.Open(ctx, dsn, postgres.Options{})
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf(`schema %q (search_path) does not exist and this user may not create it`, name)) ||
		!strings.Contains(err.Error(), "CREATE SCHEMA "+`"`+name+`"`) {
		t.Errorf("Open as a user who may not create the schema: %v", err)
	}

	mustExec(t, conn, "ALTER ROLE "+role+" SET search_path = "+name)
	dsn = withParams(t, base, role, map[string]string{"search_path": ""})
	_, err = postgres.Open(ctx, dsn, postgres.Options{})
	if err == nil || !strings.Contains(err.Error(), "no schema of the search path ("+name+") exists") ||
		!strings.Contains(err.Error(), "?search_path=") {
		t.Errorf("Open with no search_path and no schema: %v", err)
	}
	var n int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_namespace WHERE nspname = $1`, name).Scan(&n); err != nil || n != 0 {
		t.Errorf("the refused opens left %d schemas named %s (%v)", n, name, err)
	}
}

// TestOpen_newerSchemaRefused: a database migrated by a newer binary (a
// schema_migrations row past this binary's last migration) is refused with
// a message naming both versions, and is left as it was.
func TestOpen_newerSchemaRefused(t *testing.T) {
	dsn := pgtest.Schema(t)
	ctx := context.Background()
	s, err := postgres.Open(ctx, dsn, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	conn := admin(t, dsn)
	next := postgres.SchemaVersion + 1
	mustExec(t, conn, `INSERT INTO schema_migrations (version, name) VALUES ($1, 'future.sql')`, next)
	_, err = postgres.Open(ctx, dsn, postgres.Options{})
	want := fmt.Sprintf("database schema version %d is newer than this binary's %d; run a newer recsys", next, postgres.SchemaVersion)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Open of a newer schema: %v, want %q", err, want)
	}
	var rows int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM schema_migrations`).Scan(&rows); err != nil || rows != next {
		t.Errorf("schema_migrations has %d rows after the refusal (%v), want %d", rows, err, next)
	}
	if v, err := postgres.DatabaseSchema(ctx, dsn); err != nil || v != next {
		t.Errorf("DatabaseSchema = %d, %v; want %d", v, err, next)
	}
}

// TestDatabaseSchema: the version a database holds, read without opening
// it as a store: 0 before recsys has made its tables (and none are made),
// SchemaVersion after Open, as StoredSchema says too.
func TestDatabaseSchema(t *testing.T) {
	dsn := pgtest.Schema(t)
	ctx := context.Background()
	if v, err := postgres.DatabaseSchema(ctx, dsn); err != nil || v != 0 {
		t.Fatalf("DatabaseSchema of an empty schema = %d, %v; want 0", v, err)
	}
	if v, err := postgres.DatabaseSchema(ctx, dsn); err != nil || v != 0 {
		t.Fatalf("DatabaseSchema made tables: a second read = %d, %v", v, err)
	}
	s, err := postgres.Open(ctx, dsn, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if v, err := s.StoredSchema(ctx); err != nil || v != postgres.SchemaVersion {
		t.Errorf("StoredSchema = %d, %v; want %d", v, err, postgres.SchemaVersion)
	}
	if v, err := postgres.DatabaseSchema(ctx, dsn); err != nil || v != postgres.SchemaVersion {
		t.Errorf("DatabaseSchema after Open = %d, %v; want %d", v, err, postgres.SchemaVersion)
	}
}
