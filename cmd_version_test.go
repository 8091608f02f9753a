package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/storage"
	"github.com/recsys-engine/recsys/storage/postgres"
	"github.com/recsys-engine/recsys/storage/postgres/pgtest"
)

// runCmd runs one command of the CLI in process and returns its exit
// status, stdout and stderr.
func runCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr strings.Builder
	code := runMain(t.Context(), args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// TestVersion_command: recsys version prints the schema versions this
// binary writes and, with --db, the one a database holds, read without
// changing it: current, older (a fixture of schema 2: migrated at the next
// writable open), newer (refused), none yet (a PostgreSQL schema recsys
// has not opened). A missing file, or one a server holds, is an error.
func TestVersion_command(t *testing.T) {
	code, out, errOut := runCmd(t, "version")
	wantSchemas := fmt.Sprintf("  schema    bbolt %d, postgres %d (what this binary writes)\n", storage.SchemaVersion, postgres.SchemaVersion)
	if code != 0 || !strings.HasPrefix(out, "recsys (devel)\n") || !strings.Contains(out, wantSchemas) ||
		!strings.Contains(out, "  go        "+runtime.Version()+"\n") {
		t.Fatalf("version: exit %d, stdout %q, stderr %q", code, out, errOut)
	}

	dir := t.TempDir()
	current := filepath.Join(dir, "current.db")
	st, err := storage.Open(current, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	older := filepath.Join(dir, "older.db")
	b, err := os.ReadFile(filepath.Join("storage", "testdata", "schema", "v2.bolt"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(older, b, 0o600); err != nil {
		t.Fatal(err)
	}
	newer := filepath.Join(dir, "newer.db")
	if err := os.WriteFile(newer, mustRead(t, current), 0o600); err != nil {
		t.Fatal(err)
	}
	setSchema(t, newer, storage.SchemaVersion+1)
	for _, tc := range []struct {
		db, want string
	}{
		{current, fmt.Sprintf("  database  bbolt schema %d: current\n", storage.SchemaVersion)},
		{older, fmt.Sprintf("  database  bbolt schema 2: older than this binary's %d; the first serve, import or train migrates it", storage.SchemaVersion)},
		{newer, fmt.Sprintf("  database  bbolt schema %d: newer than this binary's %d; this binary refuses it: run a newer recsys\n", storage.SchemaVersion+1, storage.SchemaVersion)},
	} {
		before := mustRead(t, tc.db)
		code, out, errOut := runCmd(t, "version", "--db", tc.db)
		if code != 0 || !strings.Contains(out, tc.want) {
			t.Errorf("version --db %s: exit %d, stdout %q, stderr %q; want %q", filepath.Base(tc.db), code, out, errOut, tc.want)
		}
		if string(mustRead(t, tc.db)) != string(before) {
			t.Errorf("version --db %s changed the file", filepath.Base(tc.db))
		}
	}

	code, out, _ = runCmd(t, "version", "--json", "--db", older)
	var v api.VersionOut
	if err := json.Unmarshal([]byte(out), &v); code != 0 || err != nil {
		t.Fatalf("version --json: exit %d, %v: %q", code, err, out)
	}
	want := api.VersionOut{Version: "(devel)", Go: runtime.Version(), Schemas: api.SchemaVersions{Bolt: storage.SchemaVersion, Postgres: postgres.SchemaVersion},
		Store: &api.StoreSchema{Kind: "bbolt", Schema: 2}}
	if v.Store == nil || *v.Store != *want.Store || v.Version != want.Version || v.Go != want.Go || v.Schemas != want.Schemas {
		t.Errorf("version --json = %+v (store %+v), want %+v (store %+v)", v, v.Store, want, want.Store)
	}

	missing := filepath.Join(dir, "missing.db")
	if code, _, errOut := runCmd(t, "version", "--db", missing); code != 1 || !strings.Contains(lastLine(errOut), "no database at "+missing) {
		t.Errorf("version --db of a missing file: exit %d, %q", code, errOut)
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Errorf("version --db created %s", missing)
	}
	held, err := storage.Open(current, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	if code, _, errOut := runCmd(t, "version", "--db", current); code != 1 || !strings.Contains(lastLine(errOut), "locked by another process (a running server answers GET /version)") {
		t.Errorf("version --db of a file a server holds: exit %d, %q", code, errOut)
	}
}

// TestVersion_commandPostgres: version --db postgres://... reads the
// schema version without creating anything: 0 before any recsys command
// opened the schema, then this binary's.
func TestVersion_commandPostgres(t *testing.T) {
	dsn := pgtest.Schema(t)
	for k, want := range []string{
		"  database  postgres schema 0: no recsys tables yet; the first serve, import or train creates them\n",
		"  database  postgres schema 0: no recsys tables yet",
		fmt.Sprintf("  database  postgres schema %d: current\n", postgres.SchemaVersion),
	} {
		if k == 2 {
			st, err := postgres.Open(t.Context(), dsn, postgres.Options{})
			if err != nil {
				t.Fatal(err)
			}
			st.Close()
		}
		if code, out, errOut := runCmd(t, "version", "--db", dsn); code != 0 || !strings.Contains(out, want) {
			t.Errorf("version --db (read %d): exit %d, stdout %q, stderr %q; want %q", k+1, code, out, errOut, want)
		}
	}
}

func mustRead(tb testing.TB, path string) []byte {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// setSchema writes schema version v into the bbolt file at path.
func setSchema(tb testing.TB, path string, v int) {
	tb.Helper()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	if err := db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte("meta")).Put([]byte("schema"), []byte{0, 0, 0, 0, 0, 0, 0, byte(v)})
	}); err != nil {
		tb.Fatal(err)
	}
}

// TestVersion_GET: GET /version answers without a key, on a server with
// both keys, the build and the running store's schema version, on either
// store.
func TestVersion_GET(t *testing.T) {
	for _, kind := range []string{"bbolt", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			a := startApp(t, func(c *Config) {
				c.AppKey, c.AdminKey = "app-key-0123456789", "admin-key-0123456789"
				if kind == "postgres" {
					c.DB = pgtest.Schema(t)
				}
			})
			var v api.VersionOut
			if st := a.getJSON(t, "/version", &v); st != http.StatusOK {
				t.Fatalf("GET /version without a key = %d", st)
			}
			schema := storage.SchemaVersion
			if kind == "postgres" {
				schema = postgres.SchemaVersion
			}
			if v.Store == nil || *v.Store != (api.StoreSchema{Kind: kind, Schema: schema}) || v.Go != runtime.Version() || v.Version != "(devel)" ||
				v.Schemas != (api.SchemaVersions{Bolt: storage.SchemaVersion, Postgres: postgres.SchemaVersion}) {
				t.Errorf("GET /version = %+v (store %+v)", v, v.Store)
			}
		})
	}
}

// TestVersion_buildStamp builds the binary from a copy of this tree
// committed to a new git repository and checks that recsys version reports
// that commit: the module's pseudo-version, the revision and its time, not
// modified; then, built again after a change, modified. (go build stamps
// only a checkout whose .git is a folder, not a git worktree's, hence the
// copy.)
func TestVersion_buildStamp(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	gitTool, err := exec.LookPath("git")
	if err != nil {
		t.Fatal("git is needed to build a stamped binary: ", err)
	}
	goTool, err := exec.LookPath("go") // the go command running this test is on PATH in CI
	if err != nil {
		goTool = filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	}
	src := t.TempDir()
	files, err := exec.Command(gitTool, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range strings.Split(strings.TrimRight(string(files), "\x00"), "\x00") {
		b, err := os.ReadFile(f)
		if os.IsNotExist(err) {
			continue // deleted in the working tree
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(src, filepath.Dir(f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(src, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const when = "2026-11-28T12:43:30Z"
	run := func(name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = src
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_DATE="+when, "GIT_COMMITTER_DATE="+when, "CGO_ENABLED=0")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	run(gitTool, "init", "-q")
	run(gitTool, "add", "-A")
	run(gitTool, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "tree")
	rev := run(gitTool, "rev-parse", "HEAD")
	bin := filepath.Join(t.TempDir(), "recsys")
	version := func() api.VersionOut {
		t.Helper()
		// The flags of the release build (.ci/run), which then finds
		// this build's packages in the cache.
		run(goTool, "build", "-buildvcs=true", "-trimpath", "-o", bin, ".")
		out, err := exec.Command(bin, "version", "--json").Output()
		var v api.VersionOut
		if err == nil {
			err = json.Unmarshal(out, &v)
		}
		if err != nil {
			t.Fatalf("recsys version --json: %v: %s", err, out)
		}
		return v
	}
	v := version()
	pseudo := "v0.0.0-20261128124330-" + rev[:12]
	if v.Revision != rev || v.Time != when || v.Modified || v.Version != pseudo {
		t.Errorf("version of a clean build = %+v, want revision %s, time %s, version %s, not modified", v, rev, when, pseudo)
	}
	if out, err := exec.Command(bin, "version").Output(); err != nil || !strings.Contains(string(out), "  revision  "+rev+"\n  time      "+when+"\n") {
		t.Errorf("recsys version: %v\n%s", err, out)
	}
	f, err := os.OpenFile(filepath.Join(src, "main.go"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(f, "\n// a change not committed")
	f.Close()
	if v := version(); v.Revision != rev || !v.Modified || v.Version != pseudo+"+dirty" {
		t.Errorf("version of a build with a change = %+v, want revision %s, modified, version %s+dirty", v, rev, pseudo)
	}
}

// TestHealthcheck: recsys healthcheck exits 0 when the server answers
// /readyz 2xx and 1, saying why, when it answers 503 or nobody listens;
// without --url it asks /readyz on the loopback side of RECSYS_ADDR.
func TestHealthcheck(t *testing.T) {
	ready := startApp(t, func(c *Config) { c.AllowFallback = true; c.Addr = freeAddr(t) })
	if code, out, errOut := runCmd(t, "healthcheck", "--url", ready.URL+"/readyz"); code != 0 || out != ready.URL+"/readyz: 200 OK\n" {
		t.Errorf("healthcheck of a ready server: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(ready.URL, "http://"))
	t.Setenv("RECSYS_ADDR", "0.0.0.0:"+port)
	if code, out, errOut := runCmd(t, "healthcheck"); code != 0 || out != "http://127.0.0.1:"+port+"/readyz: 200 OK\n" {
		t.Errorf("healthcheck with RECSYS_ADDR=0.0.0.0:%s: exit %d, stdout %q, stderr %q", port, code, out, errOut)
	}

	untrained := startApp(t, nil)
	code, _, errOut := runCmd(t, "healthcheck", "--url", untrained.URL+"/readyz")
	if last := lastLine(errOut); code != 1 || !strings.Contains(last, "503 Service Unavailable") || !strings.Contains(last, "model_not_ready") {
		t.Errorf("healthcheck of a server without a model: exit %d, last line %q", code, last)
	}
	nobody := freeAddr(t)
	start := time.Now()
	code, _, errOut = runCmd(t, "healthcheck", "--url", "http://"+nobody+"/readyz", "--timeout", "2s")
	if last := lastLine(errOut); code != 1 || !strings.Contains(last, "connection refused") || time.Since(start) > 2*time.Second {
		t.Errorf("healthcheck with nobody listening: exit %d after %v, last line %q", code, time.Since(start), last)
	}
	for addr, want := range map[string]string{
		"0.0.0.0:8080": "http://127.0.0.1:8080/readyz", ":9000": "http://127.0.0.1:9000/readyz",
		"[::]:8080": "http://[::1]:8080/readyz", "10.0.0.5:80": "http://10.0.0.5:80/readyz", "bogus": "http://127.0.0.1:8080/readyz",
	} {
		if got := defaultHealthURL(addr); got != want {
			t.Errorf("defaultHealthURL(%q) = %q, want %q", addr, got, want)
		}
	}
}
