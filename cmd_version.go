package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/storage"
	"github.com/recsys-engine/recsys/storage/postgres"
)

// buildVersion is what the binary knows of itself: the module version
// and the VCS stamp of `go build` in a checkout, and the schema version
// it writes for each store.
func buildVersion() api.VersionOut {
	v := api.VersionOut{Version: "(devel)", Go: runtime.Version(),
		Schemas: api.SchemaVersions{Bolt: storage.SchemaVersion, Postgres: postgres.SchemaVersion}}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	if bi.Main.Version != "" {
		v.Version = bi.Main.Version
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision = s.Value
		case "vcs.time":
			v.Time = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	return v
}

// schemaReader is a store that reports the schema version it holds.
type schemaReader interface {
	StoredSchema(ctx context.Context) (int, error)
}

// runningVersion is GET /version: the build and the schema of the store
// the server runs on. When the store cannot be read just now the answer
// leaves it out; /readyz is what reports a store that does not read.
func runningVersion(ctx context.Context, st any) api.VersionOut {
	v := buildVersion()
	kind := "bbolt"
	if _, ok := st.(*postgres.Store); ok {
		kind = "postgres"
	}
	if r, ok := st.(schemaReader); ok {
		if n, err := r.StoredSchema(ctx); err == nil {
			v.Store = &api.StoreSchema{Kind: kind, Schema: n}
		}
	}
	return v
}

// runVersion prints the build, the schema versions this binary writes
// and, with --db, the schema version that database holds, which it reads
// without migrating or changing anything.
func runVersion(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	fs.SetOutput(stderr)
	db := fs.String("db", "", "a database to read the schema version of: a bbolt file, or postgres://user:pass@host:port/db (read only; nothing is migrated)")
	asJSON := fs.Bool("json", false, "print the answer of GET /version as JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("version takes no arguments, got %q", fs.Args())
	}
	v := buildVersion()
	if *db != "" {
		s, err := databaseSchema(ctx, *db)
		if err != nil {
			return fmt.Errorf("--db: %w", err)
		}
		v.Store = &s
	}
	if *asJSON {
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(stdout, "%s\n", b)
		return err
	}
	fmt.Fprintf(stdout, "recsys %s\n", v.Version)
	if v.Revision != "" {
		mod := ""
		if v.Modified {
			mod = " (modified)"
		}
		fmt.Fprintf(stdout, "  revision  %s%s\n", v.Revision, mod)
		fmt.Fprintf(stdout, "  time      %s\n", v.Time)
	}
	fmt.Fprintf(stdout, "  go        %s\n", v.Go)
	fmt.Fprintf(stdout, "  schema    bbolt %d, postgres %d (what this binary writes)\n", v.Schemas.Bolt, v.Schemas.Postgres)
	if v.Store != nil {
		fmt.Fprintf(stdout, "  database  %s schema %d: %s\n", v.Store.Kind, v.Store.Schema, schemaVerdict(*v.Store, v.Schemas))
	}
	return nil
}

// databaseSchema reads the schema version of the database db names.
func databaseSchema(ctx context.Context, db string) (api.StoreSchema, error) {
	if postgres.IsDSN(db) {
		n, err := postgres.DatabaseSchema(ctx, db)
		return api.StoreSchema{Kind: "postgres", Schema: n}, err
	}
	if err := checkDatabase(db); err != nil {
		return api.StoreSchema{}, err
	}
	n, err := storage.FileSchema(db)
	return api.StoreSchema{Kind: "bbolt", Schema: n}, err
}

// schemaVerdict says what this binary does with a database of schema s.
func schemaVerdict(s api.StoreSchema, bin api.SchemaVersions) string {
	want := bin.Bolt
	if s.Kind == "postgres" {
		want = bin.Postgres
	}
	switch {
	case s.Kind == "postgres" && s.Schema == 0:
		return "no recsys tables yet; the first serve, import or train creates them"
	case s.Schema == want:
		return "current"
	case s.Schema > want:
		return fmt.Sprintf("newer than this binary's %d; this binary refuses it: run a newer recsys", want)
	}
	return fmt.Sprintf("older than this binary's %d; the first serve, import or train migrates it (back it up first: an older binary cannot open it afterwards)", want)
}
