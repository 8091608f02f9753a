package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/recsys-engine/recsys/storage"
	"github.com/recsys-engine/recsys/storage/postgres"
)

// runCompact rewrites a stopped server's bbolt file without the pages its
// deleted records left (storage.Compact).
func runCompact(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("compact", flag.ContinueOnError)
	fs.SetOutput(stderr)
	db := fs.String("db", "", "the bbolt file to compact; no server may have it open")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("compact takes no arguments, got %q", fs.Args())
	}
	if *db == "" {
		return errors.New("compact needs --db FILE")
	}
	if postgres.IsDSN(*db) {
		return errors.New("--db: compact rewrites a bbolt file; PostgreSQL reclaims space itself (VACUUM)")
	}
	start := time.Now()
	before, after, err := storage.Compact(*db, time.Second)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "compacted %s: %.1f MiB → %.1f MiB in %.1fs\n", *db, float64(before)/(1<<20), float64(after)/(1<<20), time.Since(start).Seconds())
	return nil
}
