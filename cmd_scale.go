package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/api/client"
	"github.com/recsys-engine/recsys/recsys"
	"github.com/recsys-engine/recsys/recsys/eval"
)

// scaleConfig is one run of `recsys scale`.
type scaleConfig struct {
	Interactions int
	PerUser      float64
	Items        int
	ItemExponent float64
	UserExponent float64
	// ItemFeatures is the number of numeric features of each generated
	// item record (items.jsonl, imported with --items); 0 writes none.
	ItemFeatures int
	Seed         uint64
	Dir          string
	Models       string
	TrainTimeout time.Duration
	ValUsers     int
	ReuseDB      bool
	Bench        time.Duration
	Concurrency  int
	ImportOnly   bool
	Incremental  bool
	ServeOnly    bool
	Rate         float64
	Ingest       scaleIngestConfig
	CPUProfile   string
	MemProfile   string
}

// ScaleResult is what `recsys scale --json` writes.
type ScaleResult struct {
	Interactions  int         `json:"interactions"`
	Users         int         `json:"users"`
	Items         int         `json:"items"`
	ItemExponent  float64     `json:"item_exponent"`
	UserExponent  float64     `json:"user_exponent"`
	Seed          uint64      `json:"seed"`
	GenerateSec   float64     `json:"generate_seconds"`
	ImportSec     float64     `json:"import_seconds"`
	ImportPeakRSS int64       `json:"import_peak_rss_bytes"`
	ImportLoadAvg string      `json:"import_loadavg_start,omitempty"`
	DBBytes       int64       `json:"db_bytes"`
	Train         *trainStats `json:"train,omitempty"`
	TrainError    string      `json:"train_error,omitempty"`
	TrainPeakRSS  int64       `json:"train_peak_rss_bytes"`
	ServeStartSec float64     `json:"serve_start_seconds"`
	// ServeAllLoadedSec is when every persisted model was loaded, the
	// active one serving from ServeStartSec; 0 if not by the load's end.
	ServeAllLoadedSec float64 `json:"serve_all_loaded_seconds,omitempty"`
	ServePeakRSS      int64   `json:"serve_peak_rss_bytes"`
	// ServeRSS is the server's resident memory after the load: its own
	// (anonymous: heap, models) and the pages of the mapped database file.
	ServeRSSAnon   int64         `json:"serve_rss_anon_bytes,omitempty"`
	ServeRSSFile   int64         `json:"serve_rss_file_bytes,omitempty"`
	ServeLoadAvg   string        `json:"serve_loadavg,omitempty"`
	ServedModel    string        `json:"served_model,omitempty"`
	Serving        *BenchResult  `json:"serving,omitempty"`
	LoadAvgStart   string        `json:"loadavg_start"`
	LoadAvgEnd     string        `json:"loadavg_end"`
	DBBytesTrained int64         `json:"db_bytes_after_training"`
	Ingest         *IngestResult `json:"ingest,omitempty"`
}

// runScale generates a data set shaped like real feedback, then imports,
// trains and serves it in child processes of this binary, measuring time
// and peak memory of each stage, the database size and serving latency.
func runScale(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("scale", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c scaleConfig
	var jsonOut string
	var generateOnly bool
	fs.IntVar(&c.Interactions, "interactions", 1_000_000, "distinct (user, item) pairs to generate")
	fs.Float64Var(&c.PerUser, "per-user", 50, "mean interactions per user; users = interactions / per-user")
	fs.IntVar(&c.Items, "items", 0, "catalogue size (default interactions/200, at least 1,000)")
	fs.Float64Var(&c.ItemExponent, "item-exponent", 1.0, "item popularity ∝ rank^-exponent (Zipf)")
	fs.Float64Var(&c.UserExponent, "user-exponent", 2.0, "tail index of the Pareto law of user activity")
	fs.IntVar(&c.ItemFeatures, "item-features", 0, "also write an item record for every item, with one of 50 categories and this many numeric features (items.jsonl, imported with --items), so that content is trained and served; 0 writes none")
	fs.Uint64Var(&c.Seed, "seed", 1, "random seed of the generator")
	fs.StringVar(&c.Dir, "dir", "", "working folder for events.csv and scale.db (default ./scale-N)")
	fs.StringVar(&c.Models, "models", "popular,itemknn,kunn-i", "models to train, as for recsys train")
	fs.DurationVar(&c.TrainTimeout, "train-timeout", time.Hour, "stop training after this long and report the stage reached")
	fs.IntVar(&c.ValUsers, "validation-users", eval.DefaultValidationUsers, "passed to train: validate each grid point on a sample of this many users when there are more (0: all)")
	fs.BoolVar(&c.ReuseDB, "reuse-db", false, "keep DIR/scale.db from an earlier run with the same flags and skip the import")
	fs.DurationVar(&c.Bench, "bench", 10*time.Second, "recommendation load after training; 0 skips serving")
	fs.IntVar(&c.Concurrency, "concurrency", 32, "clients of the serving load")
	fs.StringVar(&jsonOut, "json", "", "write the result as JSON to this file")
	fs.BoolVar(&generateOnly, "generate-only", false, "write events.csv and stop")
	fs.BoolVar(&c.ImportOnly, "import-only", false, "stop after the import (no training, no serving)")
	fs.StringVar(&c.CPUProfile, "cpuprofile", "", "passed to train: write a CPU profile of the training to this file")
	fs.StringVar(&c.MemProfile, "memprofile", "", "passed to train: write a heap profile at the training's peak to this file")
	fs.BoolVar(&c.Incremental, "incremental-import", false, "import with --incremental (5,000-event transactions), the path before the bulk load")
	fs.BoolVar(&c.ServeOnly, "serve-only", false, "serve DIR/scale.db as an earlier run left it (imported and trained) and run the load: no generation, import or training")
	fs.Float64Var(&c.Rate, "rate", 0, "pace the serving load to this many requests/s in all (0: as fast as the clients can)")
	fs.DurationVar(&c.Ingest.Duration, "ingest-seconds", 0, "after the import, serve the database and post events for this long (e.g. 60s; 0 skips live ingest)")
	fs.IntVar(&c.Ingest.Concurrency, "ingest-concurrency", 8, "clients of the live ingest")
	fs.IntVar(&c.Ingest.Batch, "ingest-batch", 1000, "events per POST of the live ingest")
	fs.BoolVar(&c.Ingest.ExistingUsers, "ingest-existing-users", false, "live ingest: each event of a user of the data set drawn at random (default: one fresh user per batch)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if c.Interactions < 1000 || c.PerUser < 1 || c.ItemExponent < 0 || c.UserExponent <= 1 || c.ItemFeatures < 0 || c.ItemFeatures > 4096 {
		return errors.New("--interactions ≥ 1000, --per-user ≥ 1, --item-exponent ≥ 0, --user-exponent > 1 and 0 ≤ --item-features ≤ 4096 are required")
	}
	if c.Items == 0 {
		c.Items = max(1000, c.Interactions/200)
	}
	if c.Dir == "" {
		c.Dir = fmt.Sprintf("scale-%d", c.Interactions)
	}
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		return err
	}
	res := &ScaleResult{Interactions: c.Interactions, Items: c.Items, ItemExponent: c.ItemExponent,
		UserExponent: c.UserExponent, Seed: c.Seed, LoadAvgStart: loadAvg()}
	log := func(format string, a ...any) { fmt.Fprintf(stderr, "scale: "+format+"\n", a...) }

	events := filepath.Join(c.Dir, "events.csv")
	if c.ServeOnly {
		return scaleServeOnly(ctx, c, events, res, log, stdout, stderr, jsonOut)
	}
	t0 := time.Now()
	users, err := generateScaleCSV(events, c)
	if err != nil {
		return err
	}
	res.Users, res.GenerateSec = users, time.Since(t0).Seconds()
	log("generated %d interactions of %d users on %d items in %.1fs (%s)", c.Interactions, users, c.Items, res.GenerateSec, events)
	itemsFile := ""
	if c.ItemFeatures > 0 {
		itemsFile = filepath.Join(c.Dir, "items.jsonl")
		if err := generateScaleItems(itemsFile, c); err != nil {
			return err
		}
		log("wrote %d item records with %d features each (%s)", c.Items, c.ItemFeatures, itemsFile)
	}
	if generateOnly {
		return nil
	}

	exe, err := os.Executable()
	if err != nil {
		return err
	}
	db := filepath.Join(c.Dir, "scale.db")
	var st childStats
	if c.ReuseDB && fileSize(db) > 0 {
		res.DBBytes = fileSize(db)
		log("reusing %s (%s); no import", db, mib(res.DBBytes))
	} else {
		if err := removeScaleDB(db); err != nil {
			return err
		}
		args := []string{"import", "--db", db, "--format", "csv"}
		if itemsFile != "" {
			args = append(args, "--items", itemsFile)
		}
		if c.Incremental {
			args = append(args, "--incremental")
		}
		res.ImportLoadAvg = loadAvg()
		log("importing (load %s)", res.ImportLoadAvg)
		if st, err = runChild(ctx, 0, io.Discard, stderr, exe, append(args, events)...); err != nil {
			return fmt.Errorf("import: %w", err)
		}
		res.ImportSec, res.ImportPeakRSS, res.DBBytes = st.seconds, st.peakRSS, fileSize(db)
		log("imported in %.1fs (%.0f events/s), peak RSS %s, database %s", res.ImportSec,
			float64(c.Interactions)/res.ImportSec, mib(res.ImportPeakRSS), mib(res.DBBytes))
	}
	if c.Ingest.Duration > 0 {
		if res.Ingest, err = scaleIngest(ctx, c.Ingest, exe, db, users, c.Seed, log, stderr); err != nil {
			return err
		}
	}
	if c.ImportOnly {
		return finishScale(stdout, res, jsonOut)
	}

	statsFile := filepath.Join(c.Dir, "train-stats.json")
	_ = os.Remove(statsFile)
	log("training %s (load %s)", c.Models, loadAvg())
	var trainErr bytes.Buffer
	trainArgs := []string{"train", "--db", db, "--models", c.Models, "--stats", statsFile, "--validation-users", strconv.Itoa(c.ValUsers)}
	if c.CPUProfile != "" {
		trainArgs = append(trainArgs, "--cpuprofile", c.CPUProfile)
	}
	if c.MemProfile != "" {
		trainArgs = append(trainArgs, "--memprofile", c.MemProfile)
	}
	st, err = runChild(ctx, c.TrainTimeout, stderr, io.MultiWriter(stderr, &trainErr), exe, trainArgs...)
	res.TrainPeakRSS = st.peakRSS
	if err != nil {
		res.TrainError = fmt.Sprintf("%v after %.0fs; last progress: %s", err, st.seconds, lastLine(trainErr.String()))
		log("training did not finish: %s", res.TrainError)
	} else {
		var ts trainStats
		b, err := os.ReadFile(statsFile)
		if err == nil {
			err = json.Unmarshal(b, &ts)
		}
		if err != nil {
			return fmt.Errorf("reading %s: %w", statsFile, err)
		}
		res.Train = &ts
		res.TrainPeakRSS = max(res.TrainPeakRSS, ts.PeakRSS)
	}
	res.DBBytesTrained = fileSize(db)

	if c.Bench > 0 && res.Train != nil {
		if err := scaleServe(ctx, c, exe, db, users, res, log, stderr); err != nil {
			return err
		}
	}
	return finishScale(stdout, res, jsonOut)
}

// finishScale records the final load, prints the result and writes its
// JSON when asked.
func finishScale(stdout io.Writer, res *ScaleResult, jsonOut string) error {
	res.LoadAvgEnd = loadAvg()
	printScale(stdout, res)
	if jsonOut != "" {
		return writeJSONFile(jsonOut, res)
	}
	return nil
}

// scaleServeOnly serves the database of an earlier run: the users are
// counted from the last line of its events.csv (the generator numbers
// them in order).
func scaleServeOnly(ctx context.Context, c scaleConfig, events string, res *ScaleResult, log func(string, ...any), stdout, stderr io.Writer, jsonOut string) error {
	db := filepath.Join(c.Dir, "scale.db")
	if fileSize(db) == 0 {
		return fmt.Errorf("--serve-only: %s is missing; run scale without it first", db)
	}
	users, err := lastGeneratedUser(events)
	if err != nil {
		return fmt.Errorf("--serve-only: %w", err)
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	res.Users, res.DBBytes, res.DBBytesTrained = users, fileSize(db), fileSize(db)
	if err := scaleServe(ctx, c, exe, db, users, res, log, stderr); err != nil {
		return err
	}
	return finishScale(stdout, res, jsonOut)
}

// lastGeneratedUser reads N from the last line "uN,..." of a generated
// events.csv.
func lastGeneratedUser(events string) (int, error) {
	f, err := os.Open(events)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	buf := make([]byte, min(fi.Size(), 256))
	if _, err := f.ReadAt(buf, fi.Size()-int64(len(buf))); err != nil {
		return 0, err
	}
	lines := strings.Split(strings.TrimSpace(string(buf)), "\n")
	id, _, _ := strings.Cut(lines[len(lines)-1], ",")
	n, err := strconv.Atoi(strings.TrimPrefix(id, "u"))
	if err != nil || !strings.HasPrefix(id, "u") || n < 1 {
		return 0, fmt.Errorf("%s does not end with a generated line (uN,item,...)", events)
	}
	return n, nil
}

// scaleServe starts the server on the trained database, waits until it is
// ready, runs the recommendation load, and stops it.
func scaleServe(ctx context.Context, c scaleConfig, exe, db string, users int, res *ScaleResult, log func(string, ...any), stderr io.Writer) error {
	srv, err := startScaleServer(ctx, exe, db, "/readyz")
	if err != nil {
		return err
	}
	defer srv.stop()
	res.ServeStartSec = srv.startSec
	res.ServeLoadAvg = loadAvg()
	addr := srv.addr
	log("server ready in %.2fs; %d clients for %v (load %s)", res.ServeStartSec, c.Concurrency, c.Bench, res.ServeLoadAvg)
	// The server is ready once its active model is loaded and loads the
	// others after (a request naming one meanwhile is answered
	// model_not_ready): the time they are all loaded is taken beside.
	loaded := make(chan float64, 1)
	go func() { loaded <- srv.waitAllLoaded(ctx) }()
	// Synthetic data has no taste structure, so popularity may win the
	// validation and become active; the load asks a trained model by name.
	model := ""
	for _, m := range strings.Split(c.Models, ",") {
		if m = strings.TrimSpace(m); recsys.Recommends(m) && m != recsys.PopularModel && model == "" {
			model = m
		}
	}
	res.ServedModel = model
	probe := client.New("http://" + addr)
	var ce *client.Error
	if err := probe.Send(ctx, client.RecommendCall("u1", client.RecommendOptions{N: 1, Model: model})); errors.As(err, &ce) && ce.Code == api.CodeModelNotReady {
		log("%s is not the active model and still loading: the load waits for it", model)
		res.ServeAllLoadedSec = <-loaded
		log("all models loaded %.2fs after the start", res.ServeAllLoadedSec)
		loaded = nil
	}
	defer func() {
		if loaded != nil {
			select {
			case res.ServeAllLoadedSec = <-loaded:
			default: // still loading after the load: left at 0
			}
		}
	}()
	bc := benchConfig{Addr: addr, Duration: c.Bench, Warmup: 2 * time.Second, Concurrency: c.Concurrency,
		Mix: map[benchOp]int{opRecommend: 1}, Batch: 1, Users: users, UserPrefix: "u", N: 10, Model: model, Seed: c.Seed, Rate: c.Rate}
	if res.Serving, err = bench(ctx, bc, stderr); err != nil {
		return err
	}
	mem := procMemory(srv.cmd.Process.Pid)
	res.ServeRSSAnon, res.ServeRSSFile = mem.Anon, mem.File
	res.ServePeakRSS = srv.stop()
	return nil
}

// scaleServer is `recsys serve` run by scale as a child process.
type scaleServer struct {
	addr     string
	cmd      *exec.Cmd
	started  time.Time
	startSec float64
	stopped  bool
	peakRSS  int64
}

// startScaleServer starts serve on db at a free loopback address and waits
// until path (/readyz or /healthz) answers 200.
func startScaleServer(ctx context.Context, exe, db, path string) (*scaleServer, error) {
	addr, err := freeLoopback()
	if err != nil {
		return nil, err
	}
	s := &scaleServer{addr: addr}
	s.cmd = exec.CommandContext(ctx, exe, "serve", "--db", db, "--addr", addr, "--retrain-interval", "0", "--retrain-after", "0")
	s.cmd.Stdout, s.cmd.Stderr = io.Discard, io.Discard
	start := time.Now()
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	s.started = start
	client := &http.Client{Timeout: time.Second}
	for {
		resp, err := client.Get("http://" + addr + path)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Since(start) > 5*time.Minute {
			s.stop()
			return nil, fmt.Errorf("serve: %s not answering after 5 minutes", path)
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.startSec = time.Since(start).Seconds()
	return s, nil
}

// waitAllLoaded polls /metrics until the server reports no model still
// loading and returns the seconds since its start, or 0 when ctx ends or
// the server stops answering.
func (s *scaleServer) waitAllLoaded(ctx context.Context) float64 {
	client := &http.Client{Timeout: time.Second}
	for ctx.Err() == nil {
		resp, err := client.Get("http://" + s.addr + "/metrics")
		if err != nil {
			return 0
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return 0
		}
		for _, line := range strings.Split(string(body), "\n") {
			if v, ok := strings.CutPrefix(line, "recsys_models_loading "); ok && strings.TrimSpace(v) == "0" {
				return time.Since(s.started).Seconds()
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return 0
}

// stop shuts the server down (SIGTERM) and returns its peak RSS.
func (s *scaleServer) stop() int64 {
	if s.stopped {
		return s.peakRSS
	}
	s.stopped = true
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	_ = s.cmd.Wait()
	if ru, ok := s.cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		s.peakRSS = ru.Maxrss << 10
	}
	return s.peakRSS
}

// generateScaleCSV writes user,item,,timestamp lines: Pareto user activity
// (each user's count of distinct items) and Zipf item popularity, the two
// power laws of real feedback data. It returns the number of users.
func generateScaleCSV(path string, c scaleConfig) (int, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	rng := rand.New(rand.NewPCG(c.Seed, 0x5ca1e))
	// Item popularity: cumulative Zipf weights, sampled by binary search.
	cum := make([]float64, c.Items)
	total := 0.0
	for r := range cum {
		total += math.Pow(float64(r+1), -c.ItemExponent)
		cum[r] = total
	}
	// Items get their popularity rank in a shuffled order, so that an id
	// says nothing about popularity.
	perm := rng.Perm(c.Items)
	// Pareto(xm, a) has mean a·xm/(a−1).
	a := c.UserExponent
	xm := c.PerUser * (a - 1) / a
	maxPerUser := max(1, c.Items/5)
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	year := int64(365 * 24 * 3600)
	seen := map[int]bool{}
	line := make([]byte, 0, 64)
	written, users := 0, 0
	for written < c.Interactions {
		users++
		n := int(xm / math.Pow(1-rng.Float64(), 1/a))
		n = max(1, min(n, maxPerUser, c.Interactions-written))
		clear(seen)
		for len(seen) < n {
			r, _ := slices.BinarySearch(cum, rng.Float64()*total)
			item := perm[min(r, c.Items-1)]
			if seen[item] {
				continue
			}
			seen[item] = true
			line = line[:0]
			line = append(line, 'u')
			line = strconv.AppendInt(line, int64(users), 10)
			line = append(line, ",i"...)
			line = strconv.AppendInt(line, int64(item+1), 10)
			line = append(line, ",,"...)
			line = strconv.AppendInt(line, start+rng.Int64N(year), 10)
			line = append(line, '\n')
			if _, err := w.Write(line); err != nil {
				f.Close()
				return 0, err
			}
		}
		written += n
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return 0, err
	}
	return users, f.Close()
}

// scaleCategories is the number of categories of generated item records.
const scaleCategories = 50

// generateScaleItems writes an item record for each generated item as
// `import --items` reads them: one of scaleCategories categories, and
// c.ItemFeatures features drawn around the category's centre, so that
// items of a category are near each other. The events are drawn without
// regard to them: the records are there to measure what content costs,
// not what it gains.
func generateScaleItems(path string, c scaleConfig) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	rng := rand.New(rand.NewPCG(c.Seed, 0x17e45))
	centres := make([][]float64, scaleCategories)
	for k := range centres {
		centres[k] = make([]float64, c.ItemFeatures)
		for j := range centres[k] {
			centres[k][j] = rng.NormFloat64()
		}
	}
	line := make([]byte, 0, 64+24*c.ItemFeatures)
	for i := 1; i <= c.Items; i++ {
		k := rng.IntN(scaleCategories)
		line = append(line[:0], `{"id":"i`...)
		line = strconv.AppendInt(line, int64(i), 10)
		line = append(line, `","categories":["c`...)
		line = strconv.AppendInt(line, int64(k), 10)
		line = append(line, `"],"features":{`...)
		for j, m := range centres[k] {
			if j > 0 {
				line = append(line, ',')
			}
			line = append(line, `"f`...)
			line = strconv.AppendInt(line, int64(j), 10)
			line = append(line, `":`...)
			line = strconv.AppendFloat(line, m+0.5*rng.NormFloat64(), 'g', 6, 64)
		}
		line = append(line, "}}\n"...)
		if _, err := w.Write(line); err != nil {
			f.Close()
			return err
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// childStats are the wall time and peak RSS of a finished child process.
type childStats struct {
	seconds float64
	peakRSS int64
}

// runChild runs this binary with args, killing it after timeout (0: none).
func runChild(ctx context.Context, timeout time.Duration, stdout, stderr io.Writer, exe string, args ...string) (childStats, error) {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	start := time.Now()
	err := cmd.Run()
	st := childStats{seconds: time.Since(start).Seconds()}
	if cmd.ProcessState != nil {
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			st.peakRSS = ru.Maxrss << 10 // kilobytes on Linux
		}
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		err = fmt.Errorf("stopped by --train-timeout: %w", ctx.Err())
	}
	return st, err
}

func freeLoopback() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

func mib(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }

func printScale(w io.Writer, r *ScaleResult) {
	fmt.Fprintf(w, "scale: %d interactions, %d users, %d items (Zipf %.2g items, Pareto %.2g users, seed %d)\n",
		r.Interactions, r.Users, r.Items, r.ItemExponent, r.UserExponent, r.Seed)
	fmt.Fprintf(w, "load average %s at the start, %s at the end\n", r.LoadAvgStart, r.LoadAvgEnd)
	fmt.Fprintf(w, "%-28s %9s %9s %12s\n", "stage", "seconds", "CPU s", "peak RSS")
	if r.GenerateSec > 0 { // not with --serve-only
		fmt.Fprintf(w, "%-28s %9.1f %9s %12s\n", "generate events.csv", r.GenerateSec, "", "")
		fmt.Fprintf(w, "%-28s %9.1f %9s %12s\n", "import", r.ImportSec, "", mib(r.ImportPeakRSS))
	}
	if r.Train != nil {
		for _, s := range r.Train.Stages {
			fmt.Fprintf(w, "%-28s %9.1f %9.1f %12s\n", "train: "+s.Name, s.Seconds, s.CPUSeconds, mib(s.PeakRSS))
		}
		fmt.Fprintf(w, "%-28s %9.1f %9.1f %12s\n", "train (total)", r.Train.Seconds, r.Train.CPUSeconds, mib(r.TrainPeakRSS))
	} else if r.TrainError != "" {
		fmt.Fprintf(w, "%-28s %s\n", "train", r.TrainError)
	}
	if r.Train == nil && r.TrainError == "" {
		fmt.Fprintf(w, "database: %s after import\n", mib(r.DBBytes))
	} else {
		fmt.Fprintf(w, "database: %s after import, %s after training\n", mib(r.DBBytes), mib(r.DBBytesTrained))
	}
	if r.Ingest != nil {
		printIngest(w, r.Ingest)
	}
	if r.Serving != nil {
		all := "all models loaded after the load began"
		if r.ServeAllLoadedSec > 0 {
			all = fmt.Sprintf("all models loaded in %.2fs", r.ServeAllLoadedSec)
		}
		fmt.Fprintf(w, "serving %s: ready in %.2fs, %s (load %s), peak RSS %s; after the load %s own (heap, models) + %s of the mapped database\n",
			r.ServedModel, r.ServeStartSec, all, r.ServeLoadAvg, mib(r.ServePeakRSS), mib(r.ServeRSSAnon), mib(r.ServeRSSFile))
		printBench(w, r.Serving)
	}
}

// removeScaleDB removes an earlier run's database at db, with its lock file
// and its event log (db + ".events"): the import refuses an event log that
// is not its database's, so a log left behind would fail every later run
// on the same folder.
func removeScaleDB(db string) error {
	for _, f := range []string{db, db + ".lock"} {
		if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return os.RemoveAll(db + ".events")
}
