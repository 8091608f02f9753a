package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/storage"
	"github.com/recsys-engine/recsys/storage/postgres"
)

// runBackup copies a running bbolt server's database into a file through
// GET /admin/backup (storage.Store.Backup): every event acknowledged
// before it began is in the copy, which `serve --db FILE` opens as it is.
// The copy goes to FILE.partial-* first and becomes FILE only once it is
// whole, fsynced and checked (storage.ReceiveBackup).
func runBackup(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("backup", flag.ContinueOnError)
	fs.SetOutput(stderr)
	from := fs.String("from", "", "the running server: http://HOST:PORT (https:// too)")
	to := fs.String("to", "", "the file to write: a bbolt database that serve --db opens")
	force := fs.Bool("force", false, "replace --to if it exists")
	adminKey := new(string)
	keyFlag(fs, adminKey, "admin-key", "the server's admin `key` (env RECSYS_ADMIN_KEY, which keeps it out of the process list)", "RECSYS_ADMIN_KEY")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("backup takes no arguments, got %q", fs.Args())
	}
	if *from == "" || *to == "" {
		return errors.New("backup needs --from http://HOST:PORT and --to FILE")
	}
	if postgres.IsDSN(*from) {
		return errors.New("--from: backup copies a running server's bbolt database over HTTP; back up PostgreSQL with pg_dump -Fc (docs/operations.md, Back up and restore)")
	}
	if postgres.IsDSN(*to) {
		return errors.New("--to: a backup is a bbolt file; to copy into PostgreSQL, use migrate")
	}
	base := strings.TrimSuffix(*from, "/")
	if !strings.HasPrefix(base, "http://") && !strings.HasPrefix(base, "https://") {
		base = "http://" + base
	}
	// Refuse the target before the server streams a whole copy for nothing.
	if err := storage.CheckBackupTarget(*to, *force); err != nil {
		return fmt.Errorf("--to: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/admin/backup", nil)
	if err != nil {
		return fmt.Errorf("--from: %w", err)
	}
	if *adminKey != "" {
		req.Header.Set("Authorization", "Bearer "+*adminKey)
	}
	start := time.Now()
	// No client timeout: a copy takes as long as the database is large; a
	// signal (ctx) stops it, and the server cuts a client that stalls.
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("--from: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answered %s: %s", req.URL, resp.Status, errorMessage(resp.Body))
	}
	info, err := storage.ReceiveBackup(resp.Body, resp.ContentLength, *to, *force)
	if err != nil {
		return fmt.Errorf("backup: %w (no file was written at %s)", err, *to)
	}
	fmt.Fprintf(stdout, "backed up %s to %s in %.1fs: %s, %d users, %d items, %d events; checked, opens with serve --db %s\n",
		base, *to, time.Since(start).Seconds(), byteSize(info.Bytes), info.Counts.Users, info.Counts.Items, info.Counts.Events, *to)
	return nil
}

// errorMessage is the message of an error envelope, or the start of a
// body that is not one.
func errorMessage(body io.Reader) string {
	b, _ := io.ReadAll(io.LimitReader(body, 64<<10))
	var e api.ErrorOut
	if json.Unmarshal(b, &e) == nil && e.Error.Message != "" {
		return e.Error.Message
	}
	s := strings.TrimSpace(string(b))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
