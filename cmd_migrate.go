package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"reflect"
	"time"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/storage"
	"github.com/recsys-engine/recsys/storage/backend"
	"github.com/recsys-engine/recsys/storage/dump"
	"github.com/recsys-engine/recsys/storage/postgres"
)

// runMigrate copies a whole database into a new one, bbolt to PostgreSQL or
// back (or to the same kind): every user, item, pair, counter, sequence,
// model version, job and report, every impression list, credit, online
// counter and experiment, with indices and times as they are. It counts
// and checksums the records going in, reads the copy back and checks both.
// A bbolt source's event log, the raw history of its events, is not copied
// (every event in it is in the copied records; a bbolt copy starts a log of
// its own): the command says so. A read-only bbolt source whose log holds
// events not yet applied is refused (storage.Store.Dump).
func runMigrate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	from := fs.String("from", "", "the database to copy: a bbolt file or postgres://user:pass@host:port/db")
	to := fs.String("to", "", "the new database: a bbolt file (created if missing) or postgres://... (a database or schema holding no recsys data)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("migrate takes no arguments, got %q", fs.Args())
	}
	if *from == "" || *to == "" {
		return errors.New("migrate needs --from DB and --to DB")
	}
	if *from == *to {
		return errors.New("--from and --to name the same database")
	}
	if !postgres.IsDSN(*from) {
		if _, err := os.Stat(*from); err != nil {
			return fmt.Errorf("--from: no database at %s", postgres.Redact(*from))
		}
	}
	created := false
	if !postgres.IsDSN(*to) {
		if _, err := os.Stat(*to); errors.Is(err, os.ErrNotExist) {
			created = true
		}
	}
	start := time.Now()
	sum, history, err := migrate(ctx, *from, *to)
	if err != nil {
		if created {
			os.Remove(*to) // leave no half-made file behind
		}
		return err
	}
	fmt.Fprintf(stdout, "copied %s from %s to %s in %.1fs\nverified: the copy reads back the same records, sha256 %s\n",
		sum, postgres.Redact(*from), postgres.Redact(*to), time.Since(start).Seconds(), sum.Sum())
	if history > 0 {
		fmt.Fprintf(stdout, "not copied: the event log beside %s (%s), the raw history of its events; every event in it is in the copied records\n",
			*from, byteSize(history))
	}
	return nil
}

// migrate copies from into to and verifies the copy. history is the size
// of a bbolt source's event log when it holds records (not copied).
func migrate(ctx context.Context, from, to string) (sum *dump.Sum, history int64, err error) {
	var src backend.Store
	if postgres.IsDSN(from) {
		src, err = postgres.Open(ctx, from, postgres.Options{})
	} else {
		var bs *storage.Store
		if bs, err = storage.Open(from, storage.Options{ReadOnly: true}); err == nil {
			src = bs
			if n, ok := bs.LogHistory(); ok {
				history = n
			}
		}
	}
	if err != nil {
		return nil, 0, fmt.Errorf("--from: %w", err)
	}
	defer src.Close()
	dst, err := openStore(ctx, to, api.DefaultPolicy(), 0)
	if err != nil {
		return nil, 0, fmt.Errorf("--to: %w", err)
	}
	defer dst.Close()
	in := dump.NewSum(nil)
	err = dst.Restore(ctx, func(sink dump.Sink) error {
		in = dump.NewSum(sink)
		return src.Dump(ctx, in)
	})
	if errors.Is(err, dump.ErrNotEmpty) {
		return nil, 0, fmt.Errorf("--to %s already holds data: migrate copies into a new, empty database", postgres.Redact(to))
	}
	if err != nil {
		return nil, 0, fmt.Errorf("copying: %w (nothing was stored)", err)
	}
	out := dump.NewSum(nil)
	if err := dst.Dump(ctx, out); err != nil {
		return nil, 0, fmt.Errorf("reading the copy back: %w", err)
	}
	if out.Sum() != in.Sum() || !reflect.DeepEqual(out.Counts, in.Counts) {
		return nil, 0, fmt.Errorf("verification failed: copied %s (sha256 %s), the copy holds %s (sha256 %s)", in, in.Sum(), out, out.Sum())
	}
	return in, history, nil
}
