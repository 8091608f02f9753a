package main

import (
	"bytes"
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/recsys-engine/recsys/storage/postgres/pgtest"
)

// dsnPassword is the password the redaction tests put in their DSNs.
const dsnPassword = "Pw-never-printed-4471"

// withPassword is dsn with dsnPassword as its user's password, or, with
// inQuery, as a password= query parameter. The test server trusts its
// loopback clients, so the password does not stop the connection.
func withPassword(t *testing.T, dsn string, inQuery bool) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := u.User.Password(); ok {
		t.Fatalf("the test server's DSN has a password (%d bytes): these tests put their own in", len(p))
	}
	if inQuery {
		q := u.Query()
		q.Set("password", dsnPassword)
		u.RawQuery = q.Encode()
	} else {
		u.User = url.UserPassword(u.User.Username(), dsnPassword)
	}
	return u.String()
}

// TestCommands_redactDSN runs every command that takes a database with a
// PostgreSQL URL holding a password, in the user information or the
// query, and with one in RECSYS_DB; whether the command succeeds or fails
// (an unreachable server, a URL that does not parse, a database that
// already holds data), nothing it prints holds the password. Keys taken
// from the environment are not printed by -h either.
func TestCommands_redactDSN(t *testing.T) {
	dir := t.TempDir()
	csv := filepath.Join(dir, "events.csv")
	if err := os.WriteFile(csv, []byte("u1,i1\nu1,i2\nu2,i1\nu2,i3\nu3,i2\nu3,i3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "filled.db")
	filledFile(t, file)
	inUser := withPassword(t, pgtest.Schema(t), false)
	inQuery := withPassword(t, pgtest.Schema(t), true)
	intoQuery := withPassword(t, pgtest.Schema(t), true)
	unreachable := "postgres://recsys:" + dsnPassword + "@127.0.0.1:1/recsys?connect_timeout=2"
	unparsable := "postgres://recsys:" + dsnPassword + "/x@127.0.0.1/recsys"

	for _, c := range []struct {
		name string
		args []string
		env  []string // name, value pairs
		ok   bool     // the command succeeds
		say  string   // its output holds this
	}{
		{name: "import", args: []string{"import", "--db", inUser, "--format", "csv", csv}, ok: true, say: "recsys:xxxxx@"},
		{name: "import, password in the query", args: []string{"import", "--db", inQuery, "--format", "csv", csv}, ok: true, say: "password=xxxxx"},
		{name: "train", args: []string{"train", "--db", inUser, "--models", "popular"}, ok: true, say: "trained 1 of 1 models"},
		{name: "migrate from PostgreSQL", args: []string{"migrate", "--from", inQuery, "--to", filepath.Join(dir, "copy.db")}, ok: true, say: "password=xxxxx"},
		{name: "migrate to PostgreSQL", args: []string{"migrate", "--from", file, "--to", intoQuery}, ok: true, say: "password=xxxxx"},
		{name: "migrate into a database that holds data", args: []string{"migrate", "--from", file, "--to", inUser}, say: "already holds data"},
		{name: "import, unreachable server", args: []string{"import", "--db", unreachable, "--format", "csv", csv}, say: "127.0.0.1"},
		{name: "train, unreachable server", args: []string{"train", "--db", unreachable}, say: "127.0.0.1"},
		{name: "serve, unreachable server", args: []string{"serve", "--addr", "127.0.0.1:0", "--db", unreachable}, say: "127.0.0.1"},
		{name: "migrate, unreachable server", args: []string{"migrate", "--from", unreachable, "--to", filepath.Join(dir, "never.db")}, say: "127.0.0.1"},
		{name: "import, a URL that does not parse", args: []string{"import", "--db", unparsable, "--format", "csv", csv}, say: "does not parse"},
		{name: "compact", args: []string{"compact", "--db", inUser}, say: "bbolt"},
		{name: "import -h, RECSYS_DB", args: []string{"import", "-h"}, env: []string{"RECSYS_DB", inUser}, ok: true, say: "recsys:xxxxx@"},
		{name: "train -h, RECSYS_DB in the query", args: []string{"train", "-h"}, env: []string{"RECSYS_DB", inQuery}, ok: true, say: "password=xxxxx"},
		{name: "serve -h, RECSYS_DB and keys", args: []string{"serve", "-h"}, ok: true, say: "$RECSYS_ADMIN_KEY",
			env: []string{"RECSYS_DB", inUser, "RECSYS_APP_KEY", "app-" + dsnPassword, "RECSYS_ADMIN_KEY", "admin-" + dsnPassword}},
		{name: "bench -h, RECSYS_ADMIN_KEY", args: []string{"bench", "-h"}, env: []string{"RECSYS_ADMIN_KEY", "admin-" + dsnPassword}, ok: true, say: "$RECSYS_ADMIN_KEY"},
	} {
		t.Run(c.name, func(t *testing.T) {
			for k := 0; k+1 < len(c.env); k += 2 {
				t.Setenv(c.env[k], c.env[k+1])
			}
			var stdout, stderr bytes.Buffer
			code := runMain(t.Context(), c.args, &stdout, &stderr)
			out := stdout.String() + stderr.String()
			if (code == 0) != c.ok {
				t.Fatalf("exit %d, want success %v: %s", code, c.ok, out)
			}
			if strings.Contains(out, dsnPassword) {
				t.Fatalf("the output shows the password:\n%s", out)
			}
			if !strings.Contains(out, c.say) {
				t.Errorf("the output does not say %q:\n%s", c.say, out)
			}
		})
	}
}

// TestServe_redactsDSNInLog: a running server logs its database with the
// password masked, a password given in the query included.
func TestServe_redactsDSNInLog(t *testing.T) {
	for _, inQuery := range []bool{false, true} {
		dsn := withPassword(t, pgtest.Schema(t), inQuery)
		ctx, cancel := context.WithCancel(t.Context())
		var stdout, stderr syncBuffer
		done := make(chan int, 1)
		go func() {
			done <- runMain(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--db", dsn, "--allow-fallback", "--retrain-interval", "0", "--retrain-after", "0"}, &stdout, &stderr)
		}()
		deadline := time.Now().Add(30 * time.Second)
		for !strings.Contains(stderr.String(), `msg=serving`) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		cancel()
		if code := <-done; code != 0 {
			t.Fatalf("serve: exit %d: %s", code, stderr.String())
		}
		logs := stdout.String() + stderr.String()
		if !strings.Contains(logs, "msg=serving") || !strings.Contains(logs, "xxxxx") {
			t.Fatalf("no serving line with a masked DSN in the log:\n%s", logs)
		}
		if strings.Contains(logs, dsnPassword) {
			t.Fatalf("password in query %v: the log shows the password:\n%s", inQuery, logs)
		}
	}
}

// A keyword/value DSN (not a postgres:// URL) is taken as a file name,
// which does not exist; the errors that name it mask its password.
func TestCommands_redactKeywordDSN(t *testing.T) {
	const dsn = "host=db.example user=recsys password=kw-secret-value dbname=recsys"
	for _, args := range [][]string{{"train", "--db", dsn}, {"migrate", "--from", dsn, "--to", filepath.Join(t.TempDir(), "to.db")}} {
		var stdout, stderr bytes.Buffer
		if code := runMain(t.Context(), args, &stdout, &stderr); code == 0 {
			t.Fatalf("%v succeeded", args[0])
		}
		if out := stdout.String() + stderr.String(); strings.Contains(out, "kw-secret-value") || !strings.Contains(out, "no database") {
			t.Fatalf("%s printed %q", args[0], out)
		}
	}
}
