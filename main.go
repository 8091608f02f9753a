// Command recsys is a self-hosted recommendation service: one binary that
// serves the HTTP API, imports data sets, trains models, evaluates them,
// and measures a server under load. Its commands, as its usage lists them:
//
//	recsys serve   [--addr 127.0.0.1:8080] [--db ./recsys.db] [--demo]
//	recsys import  --db DB --format movielens|lastfm|csv [--min-value X] PATH
//	recsys train   --db DB [--models NAME,...|all]
//	recsys eval    --data PATH --format movielens|lastfm|csv [--models NAME,...|all] [--folds 3] [--protocol standard|novelty] [--seed N] [--json FILE] [--dump DIR]
//	recsys eval-retrieval --data FILE.csv --label COLUMN [--methods NAME,...] [--splits 10] [--seed N] [--json FILE]
//	recsys bench   --addr HOST:PORT [--duration 30s] [--concurrency 32] [--rate R] [--mix recommend=80,similar=10,ingest=10]
//	recsys scale   [--interactions 1000000] [--models popular,itemknn,kunn-i] [--dir DIR] [--bench 10s] [--rate R] [--serve-only] [--json FILE]
//	recsys migrate --from FILE.db|postgres://... --to postgres://...|FILE.db
//	recsys compact --db FILE.db
//	recsys backup  --from http://HOST:PORT --to FILE.db [--force]
//	recsys version [--db DB] [--json]
//	recsys healthcheck [--url http://127.0.0.1:8080/readyz]
//
// DB is a bbolt file or postgres://user:pass@host:port/db; "recsys
// COMMAND --help" prints the flags of one command.
//
// Works cited in the comments are listed in docs/references.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

const usage = `recsys: a self-hosted recommendation service

Usage:
  recsys serve   [--addr 127.0.0.1:8080] [--db ./recsys.db] [--demo]
  recsys import  --db DB --format movielens|lastfm|csv [--min-value X] PATH
  recsys train   --db DB [--models NAME,...|all]
  recsys eval    --data PATH --format movielens|lastfm|csv [--models NAME,...|all]
                 [--folds 3] [--protocol standard|novelty] [--seed N] [--json FILE] [--dump DIR]
  recsys eval-retrieval --data FILE.csv --label COLUMN [--methods NAME,...] [--splits 10] [--seed N] [--json FILE]
  recsys bench   --addr HOST:PORT [--duration 30s] [--concurrency 32] [--rate R] [--mix recommend=80,similar=10,ingest=10]
  recsys scale   [--interactions 1000000] [--models popular,itemknn,kunn-i] [--dir DIR] [--bench 10s] [--rate R] [--serve-only] [--json FILE]
  recsys migrate --from FILE.db|postgres://... --to postgres://...|FILE.db
  recsys compact --db FILE.db    (a stopped server's file, without its free pages)
  recsys backup  --from http://HOST:PORT --to FILE.db [--force]   (a running server's copy)
  recsys version [--db DB] [--json]    (build, schema versions; a database's, read only)
  recsys healthcheck [--url http://127.0.0.1:8080/readyz]    (exit 0 when ready: a container probe)

DB is a bbolt file or postgres://user:pass@host:port/db.

Run "recsys <command> --help" for the flags of one command.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := runMain(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// runMain runs a command and returns the exit status, printing its error
// as the last line of stderr.
func runMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	err := run(ctx, args, stdout, stderr)
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return 0
	}
	fmt.Fprintln(stderr, "recsys:", err)
	return 1
}

// commands are the subcommands by name, each in its own cmd_*.go.
var commands = map[string]func(ctx context.Context, args []string, stdout, stderr io.Writer) error{
	"serve":          runServe,
	"import":         runImport,
	"train":          runTrain,
	"eval":           runEval,
	"eval-retrieval": runEvalRetrieval,
	"bench":          runBench,
	"scale":          runScale,
	"migrate":        runMigrate,
	"compact":        runCompact,
	"backup":         runBackup,
	"version":        runVersion,
	"healthcheck":    runHealthcheck,
}

// run dispatches a subcommand; it is main without the process around it.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errors.New("no command given")
	}
	cmd, rest := args[0], args[1:]
	if f, ok := commands[cmd]; ok {
		return f(ctx, rest, stdout, stderr)
	}
	if cmd == "help" || cmd == "-h" || cmd == "--help" {
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("unknown command %q", cmd)
}
