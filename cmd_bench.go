package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/recsys-engine/recsys/api"
)

func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c benchConfig
	var mix, jsonOut string
	fs.StringVar(&c.Addr, "addr", "127.0.0.1:8080", "server address HOST:PORT")
	fs.DurationVar(&c.Duration, "duration", 30*time.Second, "measured duration")
	fs.DurationVar(&c.Warmup, "warmup", 2*time.Second, "unmeasured warm-up before the run")
	fs.IntVar(&c.Concurrency, "concurrency", 32, "concurrent clients")
	fs.StringVar(&mix, "mix", "recommend=100", "request mix as op=weight,...: recommend, similar, ingest")
	fs.IntVar(&c.Batch, "batch", 100, "events per ingest request")
	fs.IntVar(&c.Users, "users", 943, "user ids are PREFIX1..PREFIXN")
	fs.StringVar(&c.UserPrefix, "user-prefix", "", "prefix of user ids")
	var usersFile, itemsFile string
	fs.StringVar(&itemsFile, "items-file", "", "similar-items and ingest requests ask for the items of this file: the second comma-separated field of each line (an import CSV; a header line named item/item_id is skipped), or the first when a line has one (default: the first 10,000 items the server lists)")
	fs.StringVar(&usersFile, "users-file", "", "ask for the users of this file instead: the first comma-separated field of each line (an import CSV works; a header line named user/user_id is skipped)")
	fs.BoolVar(&c.IngestUsers, "ingest-users", false, "ingest events of the users PREFIX1..PREFIXN, one drawn at random per event (default: one fresh user per batch)")
	fs.IntVar(&c.N, "n", 10, "n of each recommendation request")
	fs.StringVar(&c.Model, "model", "", "model of each recommendation request (default: the active one)")
	fs.StringVar(&c.Steering.Placement, "placement", "", "answer each recommendation and similar-items request as this placement (docs/rules.md)")
	fs.StringVar(&c.Steering.Filter, "filter", "", "filter expression of each recommendation and similar-items request (docs/rules.md)")
	fs.StringVar(&c.SimilarBy, "similar-by", "", "by= of each similar-items request: collaborative, content or hybrid (default: the server's)")
	keyFlag(fs, &c.Key, "key", "API `key` to send (env RECSYS_ADMIN_KEY, else RECSYS_APP_KEY)", "RECSYS_ADMIN_KEY", "RECSYS_APP_KEY")
	fs.Uint64Var(&c.Seed, "seed", 1, "random seed")
	fs.StringVar(&jsonOut, "json", "", "write the result as JSON to this file")
	fs.Float64Var(&c.Rate, "rate", 0, "pace the clients to this many requests/s in all, latency from the scheduled send time (0: as fast as they can)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	var err error
	if c.Mix, err = parseMix(mix); err != nil {
		return fmt.Errorf("--mix: %w", err)
	}
	if c.Concurrency < 1 || c.Duration <= 0 || c.Users < 1 || c.Batch < 1 || c.Batch > api.MaxBatch || c.Rate < 0 {
		return errors.New("--concurrency, --duration, --users must be positive, --rate not negative and --batch within 1..10000")
	}
	if usersFile != "" {
		if c.UserIDs, err = readIDs(usersFile, 0, "user"); err != nil {
			return fmt.Errorf("--users-file: %w", err)
		}
	}
	if itemsFile != "" {
		if c.ItemIDs, err = readIDs(itemsFile, 1, "item"); err != nil {
			return fmt.Errorf("--items-file: %w", err)
		}
	}
	res, err := bench(ctx, c, stderr)
	if err != nil {
		return err
	}
	printBench(stdout, res)
	if jsonOut != "" {
		return writeJSONFile(jsonOut, res)
	}
	return nil
}

// readIDs reads the distinct ids of a file's lines, in order of first
// appearance: the comma-separated field col of each line, or its first
// field when it has no more; a first line naming kind or kind_id is a
// header.
func readIDs(name string, col int, kind string) ([]string, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	seen := map[string]bool{}
	var ids []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for line := 1; sc.Scan(); line++ {
		fields := strings.SplitN(sc.Text(), ",", col+2)
		id := strings.TrimSpace(fields[min(col, len(fields)-1)])
		if id == "" || (line == 1 && (id == kind || id == kind+"_id")) || seen[id] {
			continue
		}
		seen[id] = true
		ids = append(ids, id)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("%s holds no %s id", name, kind)
	}
	return ids, nil
}

func parseMix(s string) (map[benchOp]int, error) {
	out := map[benchOp]int{}
	for _, part := range strings.Split(s, ",") {
		name, w, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			w = "1"
		}
		n, err := strconv.Atoi(w)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("weight %q of %q is not a non-negative integer", w, name)
		}
		switch op := benchOp(name); op {
		case opRecommend, opSimilar, opIngest:
			out[op] += n
		default:
			return nil, fmt.Errorf("unknown op %q (recommend, similar, ingest)", name)
		}
	}
	total := 0
	for _, n := range out {
		total += n
	}
	if total == 0 {
		return nil, errors.New("all weights are zero")
	}
	return out, nil
}
