// Package pgtest gives tests a PostgreSQL server: the one named by
// RECSYS_TEST_POSTGRES (.ci/run starts one with .ci/postgres.sh), or else a
// throwaway cluster it starts itself from the Debian binaries
// (/usr/lib/postgresql/*/bin) in a temporary directory, as an unprivileged
// user, on a free loopback port. Each test gets its own schema, so tests
// run in parallel. With neither a server nor the binaries, the tests fail
// with an instruction, unless RECSYS_SKIP_POSTGRES=1 skips them.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Instruction is what a test says when it has no PostgreSQL.
const Instruction = "these tests need PostgreSQL: install it (apt-get install postgresql) so the tests start a throwaway cluster, " +
	"or set RECSYS_TEST_POSTGRES=postgres://user:pass@host:port/db to a server they may create schemas on " +
	"(.ci/postgres.sh start DIR prints one), or set RECSYS_SKIP_POSTGRES=1 to skip them"

var (
	shared struct {
		once sync.Once
		c    *Cluster
		err  error
	}
	mainCalled bool
)

// Main runs the tests of a package that uses Schema and stops the cluster
// it may have started. Call it from TestMain.
func Main(m *testing.M) {
	mainCalled = true
	code := m.Run()
	if shared.c != nil {
		shared.c.Stop()
		os.RemoveAll(shared.c.dir)
	}
	os.Exit(code)
}

// server returns the DSN of the server tests share.
func server(tb testing.TB) string {
	tb.Helper()
	if dsn := os.Getenv("RECSYS_TEST_POSTGRES"); dsn != "" {
		return dsn
	}
	if os.Getenv("RECSYS_SKIP_POSTGRES") == "1" {
		tb.Skip("RECSYS_SKIP_POSTGRES=1: skipping the PostgreSQL tests")
	}
	if !mainCalled {
		tb.Fatal("pgtest: call pgtest.Main(m) from the package's TestMain, so the cluster it starts is stopped")
	}
	shared.once.Do(func() {
		dir, err := os.MkdirTemp("", "recsys-pg-")
		if err != nil {
			shared.err = err
			return
		}
		shared.c, shared.err = start(dir)
	})
	if shared.err != nil {
		tb.Fatalf("%v\n%s", shared.err, Instruction)
	}
	return shared.c.DSN()
}

// Schema creates an empty schema on the test server, dropped when the test
// ends, and returns a DSN whose connections use it.
func Schema(tb testing.TB) string {
	tb.Helper()
	return SchemaOn(tb, server(tb))
}

// SchemaOn is Schema on the server at dsn.
func SchemaOn(tb testing.TB, dsn string) string {
	tb.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		tb.Fatalf("connecting to the test server: %v\n%s", err, Instruction)
	}
	defer conn.Close(ctx)
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "t_" + hex.EncodeToString(b)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+name); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		conn, err := pgx.Connect(context.Background(), dsn)
		if err != nil {
			return // the server is gone (a test stopped it): nothing to drop
		}
		defer conn.Close(context.Background())
		_, _ = conn.Exec(context.Background(), "DROP SCHEMA "+name+" CASCADE")
	})
	u, err := url.Parse(dsn)
	if err != nil {
		tb.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", name)
	u.RawQuery = q.Encode()
	return u.String()
}

// Cluster is a throwaway PostgreSQL cluster.
type Cluster struct {
	dir, bin string
	port     int
	asUser   *user.User // nil: run as ourselves
}

// NewCluster starts a private cluster for a test that stops and restarts
// it; it is removed when the test ends.
func NewCluster(tb testing.TB) *Cluster {
	tb.Helper()
	if os.Getenv("RECSYS_SKIP_POSTGRES") == "1" {
		tb.Skip("RECSYS_SKIP_POSTGRES=1: skipping the PostgreSQL tests")
	}
	dir, err := os.MkdirTemp("", "recsys-pg-")
	if err != nil {
		tb.Fatal(err)
	}
	c, err := start(dir)
	if err != nil {
		os.RemoveAll(dir)
		tb.Fatalf("%v\n%s", err, Instruction)
	}
	tb.Cleanup(func() { c.Stop(); os.RemoveAll(dir) })
	return c
}

// DSN is the cluster's connection string.
func (c *Cluster) DSN() string {
	return fmt.Sprintf("postgres://recsys@127.0.0.1:%d/postgres?sslmode=disable", c.port)
}

func binDir() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(a, b int) bool { return version(dirs[a]) < version(dirs[b]) })
	for k := len(dirs) - 1; k >= 0; k-- {
		if _, err := os.Stat(filepath.Join(dirs[k], "initdb")); err == nil {
			return dirs[k], nil
		}
	}
	return "", fmt.Errorf("no PostgreSQL binaries in /usr/lib/postgresql/*/bin and RECSYS_TEST_POSTGRES is not set")
}

func version(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

// start runs initdb in dir and starts the server.
func start(dir string) (*Cluster, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	c := &Cluster{dir: dir, bin: bin}
	if os.Geteuid() == 0 {
		// initdb and postgres refuse to run as root.
		if c.asUser, err = user.Lookup("nobody"); err != nil {
			return nil, fmt.Errorf("running as root and there is no user nobody to run PostgreSQL as: %w", err)
		}
	}
	data := filepath.Join(dir, "data")
	if err := os.Chmod(dir, 0o755); err != nil {
		return nil, err
	}
	if err := os.Mkdir(data, 0o700); err != nil {
		return nil, err
	}
	if err := c.chown(data); err != nil {
		return nil, err
	}
	if out, err := c.run("initdb", "-D", data, "-U", "recsys", "--auth=trust", "-E", "UTF8", "--no-locale", "--no-sync"); err != nil {
		return nil, fmt.Errorf("initdb: %v\n%s", err, out)
	}
	var lastErr error
	for range 8 {
		if c.port, err = freePort(); err != nil {
			return nil, err
		}
		if lastErr = c.Start(); lastErr == nil {
			return c, nil
		}
	}
	return nil, lastErr
}

// Start starts the (stopped) server and waits until it accepts connections.
func (c *Cluster) Start() error {
	data := filepath.Join(c.dir, "data")
	opts := fmt.Sprintf("-c listen_addresses=127.0.0.1 -p %d -c unix_socket_directories=%s -c fsync=off -c max_connections=200 -c shared_buffers=32MB", c.port, data)
	out, err := c.run("pg_ctl", "-D", data, "-l", filepath.Join(data, "server.log"), "-w", "-t", "60", "-o", opts, "start")
	if err != nil {
		log, _ := os.ReadFile(filepath.Join(data, "server.log"))
		return fmt.Errorf("pg_ctl start: %v\n%s\n%s", err, out, log)
	}
	return nil
}

// Stop stops the server at once (as a crash would: open connections break).
func (c *Cluster) Stop() {
	_, _ = c.run("pg_ctl", "-D", filepath.Join(c.dir, "data"), "-m", "immediate", "-w", "stop")
}

func (c *Cluster) chown(path string) error {
	if c.asUser == nil {
		return nil
	}
	uid, _ := strconv.Atoi(c.asUser.Uid)
	gid, _ := strconv.Atoi(c.asUser.Gid)
	return os.Chown(path, uid, gid)
}

func (c *Cluster) run(prog string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(c.bin, prog), args...)
	cmd.Dir = c.dir
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	if c.asUser != nil {
		uid, _ := strconv.Atoi(c.asUser.Uid)
		gid, _ := strconv.Atoi(c.asUser.Gid)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	}
	out, err := cmd.CombinedOutput()
	return out, err
}

// freePort asks the kernel for a free loopback port.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// SQL runs fn on a connection of its own to dsn, failing the test on an
// error.
func SQL(tb testing.TB, dsn string, fn func(*pgx.Conn) error) {
	tb.Helper()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		tb.Fatal(err)
	}
	defer c.Close(ctx)
	if err := fn(c); err != nil {
		tb.Fatal(err)
	}
}

// LeaderLock names the session that holds the training leader lock of the
// schema dsn names (storage/postgres/lead.go): its server process and its
// application name; 0 and "" when no session holds it.
func LeaderLock(tb testing.TB, dsn string) (pid int, app string) {
	tb.Helper()
	SQL(tb, dsn, func(c *pgx.Conn) error {
		err := c.QueryRow(context.Background(), `SELECT l.pid, a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
			WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
			AND l.classid = ((hashtext('recsys leader ' || current_schema())::bigint >> 32) & 4294967295)::oid
			AND l.objid = (hashtext('recsys leader ' || current_schema())::bigint & 4294967295)::oid`).Scan(&pid, &app)
		if err == pgx.ErrNoRows {
			return nil
		}
		return err
	})
	return pid, app
}

// Terminate ends the session of server process pid, as an operator's
// pg_terminate_backend or a network fault would, and waits until it has
// ended.
func Terminate(tb testing.TB, dsn string, pid int) {
	tb.Helper()
	SQL(tb, dsn, func(c *pgx.Conn) error {
		var ok bool
		if err := c.QueryRow(context.Background(), `SELECT pg_terminate_backend($1, 5000)`, pid).Scan(&ok); err != nil || !ok {
			return fmt.Errorf("pg_terminate_backend(%d) = %v %v", pid, ok, err)
		}
		return nil
	})
}

// Tool returns the path of a PostgreSQL program (pg_dump, pg_restore) from
// the Debian binaries (/usr/lib/postgresql/*/bin, the newest version that
// has it, as .ci/postgres.sh looks). Without it the test fails with an
// instruction, unless RECSYS_SKIP_POSTGRES=1 skips it.
func Tool(tb testing.TB, name string) string {
	tb.Helper()
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(a, b int) bool { return version(dirs[a]) > version(dirs[b]) })
	for _, d := range dirs {
		if p := filepath.Join(d, name); fileExists(p) {
			return p
		}
	}
	if os.Getenv("RECSYS_SKIP_POSTGRES") == "1" {
		tb.Skipf("RECSYS_SKIP_POSTGRES=1: skipping a test that needs %s", name)
	}
	tb.Fatalf("no %s in /usr/lib/postgresql/*/bin: install the PostgreSQL client programs (apt-get install postgresql-client), or set RECSYS_SKIP_POSTGRES=1 to skip the tests that need them", name)
	return ""
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// Database creates an empty database on the server of dsn, dropped (its
// sessions ended) when the test ends, and returns dsn naming it, without
// any search_path.
func Database(tb testing.TB, dsn string) string {
	tb.Helper()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "d_" + hex.EncodeToString(b)
	u, err := url.Parse(dsn)
	if err != nil {
		tb.Fatal(err)
	}
	q := u.Query()
	q.Del("search_path")
	u.RawQuery = q.Encode()
	server := u.String()
	SQL(tb, server, func(c *pgx.Conn) error {
		_, err := c.Exec(context.Background(), "CREATE DATABASE "+name)
		return err
	})
	tb.Cleanup(func() {
		conn, err := pgx.Connect(context.Background(), server)
		if err != nil {
			return
		}
		defer conn.Close(context.Background())
		_, _ = conn.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	})
	u.Path = "/" + name
	return u.String()
}
