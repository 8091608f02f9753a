package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/recsys"
	"github.com/recsys-engine/recsys/storage/postgres"
)

// parseFlags parses a command's flags. A bad flag is one error line that
// ends the output, with a hint, instead of the error above the command's
// whole usage (which buried it); -h still prints the usage.
func parseFlags(fs *flag.FlagSet, args []string) error {
	out := fs.Output()
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	fs.SetOutput(out)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprintf(out, "Usage of recsys %s:\n", fs.Name())
		fs.PrintDefaults()
		return err
	case err != nil:
		return fmt.Errorf("%s: %w (run 'recsys %s -h' for the flags)", fs.Name(), err, fs.Name())
	}
	return nil
}

// checkDatabase fails, naming the path, when there is no database at path:
// bbolt would create an empty one, so a mistyped --db given to a command
// that reads the store would leave a stray file and fail later, far from
// the typo.
func checkDatabase(path string) error {
	if postgres.IsDSN(path) {
		return nil
	}
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		path = postgres.Redact(path) // a keyword/value DSN is not a postgres:// URL, but may hold a password
		return fmt.Errorf("--db: no database at %s; run 'recsys import --db %s ...' or 'recsys serve --db %s' first", path, path, path)
	case err != nil:
		return fmt.Errorf("--db: %w", err)
	case fi.IsDir():
		return fmt.Errorf("--db: %s is a directory, not a database file", path)
	}
	return nil
}

// envOr returns the environment variable key, or def when it is unset.
func envOr(key, def string) string {
	if v, ok := os.LookupEnv(key); ok {
		return v
	}
	return def
}

// validationUsers maps the --validation-users flag of train, serve and
// eval (0: every user) to the Tuning.ValidationUsers convention (0: the
// default sample, negative: every user).
func validationUsers(flag int) int {
	if flag <= 0 {
		return -1
	}
	return flag
}

// parseModels reads a comma-separated list of model names.
func parseModels(s string) ([]string, error) {
	if s == "all" {
		return recsys.Kinds(), nil
	}
	var out []string
	for _, name := range strings.Split(s, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		if !recsys.Known(name) {
			return nil, fmt.Errorf("unknown model %q (known: %s)", name, strings.Join(recsys.Kinds(), ", "))
		}
		out = append(out, name)
	}
	if len(out) == 0 {
		return nil, errors.New("no models named")
	}
	return out, nil
}

// writeJSONFile writes v to name as indented JSON ending in a newline: the
// --json output of eval, eval-retrieval, bench and train --stats.
func writeJSONFile(name string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(name, append(b, '\n'), 0o644)
}

// progress is a progress bar on a terminal and periodic plain lines
// elsewhere (logs, CI).
type progress struct {
	bar   *progressbar.ProgressBar
	out   io.Writer
	label string
	total int64
	done  int64
	last  time.Time
}

func newProgress(w io.Writer, total int64, label string) *progress {
	p := &progress{out: w, label: label, total: total, last: time.Now()}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		p.bar = progressbar.NewOptions64(total, progressbar.OptionSetWriter(w),
			progressbar.OptionSetDescription(label), progressbar.OptionShowBytes(false),
			progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionClearOnFinish())
	}
	return p
}

func (p *progress) add(n int) {
	p.done += int64(n)
	if p.bar != nil {
		_ = p.bar.Add(n)
		return
	}
	if time.Since(p.last) >= 5*time.Second {
		p.last = time.Now()
		if p.total > 0 {
			fmt.Fprintf(p.out, "%s: %.0f%%\n", p.label, 100*float64(p.done)/float64(p.total))
		}
	}
}

// set moves the bar to done (of total) and names the current stage.
func (p *progress) set(done int64, stage string) {
	p.done = done
	if p.bar != nil {
		if stage != "" {
			p.bar.Describe(stage)
		}
		_ = p.bar.Set64(done)
	}
}

func (p *progress) finish() {
	if p.bar != nil {
		_ = p.bar.Finish()
	}
}

// fileSize is the size of the named file in bytes, or -1 when it cannot be
// read (an unknown total to a progress bar; a missing database to scale).
func fileSize(name string) int64 {
	if st, err := os.Stat(name); err == nil {
		return st.Size()
	}
	return -1
}

// printReport prints an evaluation report as table does and, when jsonOut
// is set, writes it there as JSON; cmd names the command in errors.
func printReport(cmd string, stdout io.Writer, rep *api.Report, table func(io.Writer, *api.Report) error, jsonOut string) error {
	if err := table(stdout, rep); err != nil {
		return err
	}
	if jsonOut != "" {
		if err := writeJSONFile(jsonOut, rep); err != nil {
			return fmt.Errorf("%s: %w", cmd, err)
		}
	}
	return nil
}

// byteSize writes n bytes in KiB or MiB.
func byteSize(n int64) string {
	if n < 1<<20 {
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

// secretString is a string flag whose value -h never prints. Its default
// may come from the environment, and flag's usage shows a flag's default:
// a key would be printed in clear, or a DSN with its password.
type secretString struct {
	p    *string
	show func(string) string // what -h shows of a set value
}

func (v secretString) String() string {
	if v.p == nil || *v.p == "" {
		return ""
	}
	return v.show(*v.p)
}

func (v secretString) Set(s string) error { *v.p = s; return nil }

// keyFlag defines a flag holding a key, its default read from the
// environment variables envs (the first set one); -h names the variable,
// never the key. Put the value's name in backquotes in usage.
func keyFlag(fs *flag.FlagSet, p *string, name, usage string, envs ...string) {
	from := ""
	for _, env := range envs {
		if v, ok := os.LookupEnv(env); ok {
			*p, from = v, env
			break
		}
	}
	fs.Var(secretString{p, func(string) string { return "$" + from }}, name, usage)
}

// envDB is the environment variable of --db's default.
const envDB = "RECSYS_DB"

// dbFlag defines --db, its default from RECSYS_DB or def; -h shows the
// default with a PostgreSQL password masked.
func dbFlag(fs *flag.FlagSet, def, usage string) *string {
	p := new(string)
	*p = envOr(envDB, def)
	fs.Var(secretString{p, postgres.Redact}, "db", usage)
	return p
}

// The training budget's flags, of serve and train (api.TrainBudget).
const (
	trainBudgetUsage = "the wall `time` within which a training job fits auto mode's additions to --models, counted from the job's start: " +
		"one whose predicted time exceeds what is left is skipped, cheapest first, with the prediction in the job record; every model's search skips " +
		"the grid points and extension steps predicted past it, fitting at least one, and lists them in the model's grid_skipped (0 or off: no limit)"
	trainMemoryUsage = "the `memory` above which a training job fits no model, named or not: a model whose predicted peak memory exceeds it is skipped " +
		"with both figures in the job record; a size (12GiB, 512MiB, bytes), a share of the machine's memory (50%: its MemTotal, " +
		"or its cgroup's memory.max when lower), or 0 or off for no limit"
	defaultTrainMemory = "50%"
)

// parseTrainBudget reads --train-budget and --train-memory.
func parseTrainBudget(timeSpec, memSpec string) (api.TrainBudget, error) {
	var b api.TrainBudget
	var err error
	if b.Time, err = api.ParseTrainTime(timeSpec); err != nil {
		return b, fmt.Errorf("--train-budget: %w", err)
	}
	if b.Memory, err = parseTrainMemory(memSpec, machineMemory()); err != nil {
		return b, fmt.Errorf("--train-memory: %w", err)
	}
	return b, nil
}

// setMemoryLimit sets the Go runtime's soft memory limit; the tests,
// which run many commands in one process, replace it.
var setMemoryLimit = debug.SetMemoryLimit

// limitMemory gives the runtime of serve and train a soft memory limit of
// nine tenths of the machine's memory (machineMemory), or budget when
// that is lower and positive, less mapped, unless GOMEMLIMIT sets one:
// without it the heap grows to twice the live data between collections
// (GOGC=100), and a training job near the machine's size is killed by the
// kernel where a collection would have made room. train passes its
// --train-memory, so that the heap of a training whose live data fit the
// budget stays within it too, and as mapped the size of the bbolt file:
// the pages of it the job reads count in its resident set beside the
// heap, and the runtime's limit does not see them (the limit keeps at
// least half of the budget). serve passes 0 and 0, since its served
// models share the heap. Below the limit the runtime behaves as without
// it; live data above it cost collections, not a kill. An unknown machine
// size sets nothing.
func limitMemory(machine, budget, mapped int64) {
	if machine <= 0 || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	limit := machine / 10 * 9
	if budget > 0 && budget < limit {
		limit = budget
	}
	setMemoryLimit(max(limit-max(mapped, 0), limit/2))
}

// mappedSize is the size of the bbolt file at db, which the store maps
// into memory; 0 for PostgreSQL or a file that cannot be read.
func mappedSize(db string) int64 {
	if postgres.IsDSN(db) {
		return 0
	}
	fi, err := os.Stat(db)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// parseTrainMemory reads a memory budget: a size (api.ParseByteSize) or a
// share of machine bytes written as a percentage in (0, 100]; a share of
// an unknown machine (0) is no limit.
func parseTrainMemory(s string, machine int64) (int64, error) {
	t := strings.TrimSpace(s)
	pct, ok := strings.CutSuffix(t, "%")
	if !ok {
		return api.ParseByteSize(t)
	}
	p, err := strconv.ParseFloat(strings.TrimSpace(pct), 64)
	if err != nil || !(p > 0 && p <= 100) {
		return 0, fmt.Errorf("%q is not a share of the machine's memory in (0%%, 100%%]", t)
	}
	return int64(float64(machine) * p / 100), nil
}
