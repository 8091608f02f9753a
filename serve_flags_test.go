package main

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/recsys-engine/recsys/api"
)

// TestServeFlags_timeoutsAndSize checks the connection-timeout and
// database-size flags: defaults, and a clear refusal of values that would
// cut off an answer or make no sense.
func TestServeFlags_timeoutsAndSize(t *testing.T) {
	c, err := parseServeFlags(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.Server != DefaultServerTimeouts || c.MaxDBSize != 0 {
		t.Fatalf("defaults: %+v, max-db-size %d", c.Server, c.MaxDBSize)
	}
	c, err = parseServeFlags([]string{"--read-header-timeout", "1s", "--read-timeout", "2s", "--write-timeout", "20s",
		"--idle-timeout", "3s", "--max-db-size", "1048576"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if want := (ServerTimeouts{ReadHeader: 1e9, Read: 2e9, Write: 20e9, Idle: 3e9}); c.Server != want || c.MaxDBSize != 1<<20 {
		t.Fatalf("parsed %+v, max-db-size %d", c.Server, c.MaxDBSize)
	}
	for _, bad := range []struct {
		args []string
		says string
	}{
		{[]string{"--write-timeout", "5s"}, "must exceed --request-timeout"},
		{[]string{"--read-header-timeout", "0s"}, "must be positive"},
		{[]string{"--idle-timeout", "-1s"}, "must be positive"},
		{[]string{"--max-db-size", "-1"}, "--max-db-size"},
	} {
		if _, err := parseServeFlags(bad.args, io.Discard); err == nil || !strings.Contains(err.Error(), bad.says) {
			t.Errorf("%v: err %v, want one saying %q", bad.args, err, bad.says)
		}
	}
}

// TestMinValue_finite: import and eval refuse a --min-value that is not a
// finite number (NaN would make every event relevant) before touching data.
func TestMinValue_finite(t *testing.T) {
	dir := t.TempDir()
	csv := filepath.Join(dir, "e.csv")
	if err := os.WriteFile(csv, []byte("u,i,1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "x.db")
	for _, v := range []string{"NaN", "Inf", "-inf", "x"} {
		err := runImport(t.Context(), []string{"--db", db, "--format", "csv", "--min-value", v, csv}, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "finite") && v != "x" {
			t.Errorf("import --min-value %s: %v", v, err)
		}
		err = runEval(t.Context(), []string{"--data", csv, "--format", "csv", "--min-value", v}, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "--min-value") {
			t.Errorf("eval --min-value %s: %v", v, err)
		}
	}
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Errorf("a refused import created the database: %v", err)
	}
}

// TestImport_minValueNeedsValues: under --min-value every event must carry
// a value (the rule POST /interactions applies); an event without one is
// reported by its number and ids, not by its place in an internal batch.
func TestImport_minValueNeedsValues(t *testing.T) {
	dir := t.TempDir()
	csv := filepath.Join(dir, "e.csv")
	if err := os.WriteFile(csv, []byte("u1,i1,5\nu2,i2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := runImport(t.Context(), []string{"--db", filepath.Join(dir, "x.db"), "--format", "csv", "--min-value", "3", csv}, io.Discard, io.Discard)
	want := `event 2 (user "u2", item "i2"): value: type view needs a value`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("import: %v, want an error containing %q", err, want)
	}
}

// TestCLI_badAddr: a malformed --addr is reported as one, naming --addr,
// before the keys are looked at and before the database is opened (it used
// to be refused as a non-loopback address with no keys).
func TestCLI_badAddr(t *testing.T) {
	for _, addr := range []string{"bogus", "127.0.0.1", "127.0.0.1:notaport", "127.0.0.1:99999", "[::1"} {
		db := filepath.Join(t.TempDir(), "x.db")
		var stderr strings.Builder
		code := runMain(t.Context(), []string{"serve", "--addr", addr, "--db", db}, io.Discard, &stderr)
		last := lastLine(stderr.String())
		if code != 1 || !strings.HasPrefix(last, "recsys: --addr: ") || strings.Contains(last, "key") {
			t.Errorf("serve --addr %q: exit %d, last line %q; want 1 and an --addr error", addr, code, last)
		}
		if _, err := os.Stat(db); !os.IsNotExist(err) {
			t.Errorf("serve --addr %q created the database: %v", addr, err)
		}
	}
	if _, err := parseServeFlags([]string{"--pprof", "bogus"}, io.Discard); err == nil || !strings.HasPrefix(err.Error(), "--pprof: ") || strings.Contains(err.Error(), "loopback") {
		t.Errorf("--pprof bogus: %v, want an address error naming --pprof", err)
	}
}

// TestCLI_missingDatabase: train on a --db where there is no database fails
// naming the path and leaves no file behind (bbolt used to create an empty
// one and training then failed on it); eval on a missing --data likewise.
func TestCLI_missingDatabase(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "mistyped.db")
	var stderr strings.Builder
	code := runMain(t.Context(), []string{"train", "--db", db}, io.Discard, &stderr)
	if last := lastLine(stderr.String()); code != 1 || !strings.Contains(last, "no database at "+db) {
		t.Errorf("train --db %s: exit %d, last line %q; want 1 naming the path", db, code, last)
	}
	stderr.Reset()
	data := filepath.Join(dir, "mistyped.csv")
	code = runMain(t.Context(), []string{"eval", "--data", data, "--format", "csv"}, io.Discard, &stderr)
	if last := lastLine(stderr.String()); code != 1 || !strings.Contains(last, data) {
		t.Errorf("eval --data %s: exit %d, last line %q; want 1 naming the path", data, code, last)
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 0 {
		t.Errorf("the failed commands left %v behind (%v)", entries, err)
	}
	if err := checkDatabase(dir); err == nil || !strings.Contains(err.Error(), "directory") {
		t.Errorf("checkDatabase(a directory) = %v", err)
	}
}

// TestCLI_badFlag: a flag a command does not know is one line, the last,
// naming the flag and the command, with a hint; not the error above the
// command's whole usage. -h still prints the usage and exits 0.
func TestCLI_badFlag(t *testing.T) {
	for _, cmd := range []string{"serve", "import", "train", "eval", "eval-retrieval", "bench", "scale"} {
		var stdout, stderr strings.Builder
		code := runMain(t.Context(), []string{cmd, "--no-such-flag"}, &stdout, &stderr)
		want := "recsys: " + cmd + ": flag provided but not defined: -no-such-flag (run 'recsys " + cmd + " -h' for the flags)\n"
		if code != 1 || stderr.String() != want || stdout.Len() != 0 {
			t.Errorf("%s --no-such-flag: exit %d, stderr %q, stdout %q; want 1 and stderr %q", cmd, code, stderr.String(), stdout.String(), want)
		}
		stderr.Reset()
		code = runMain(t.Context(), []string{cmd, "-h"}, &stdout, &stderr)
		if code != 0 || !strings.HasPrefix(stderr.String(), "Usage of recsys "+cmd+":\n") || !strings.Contains(stderr.String(), "\n  -") {
			t.Errorf("%s -h: exit %d, stderr %q", cmd, code, stderr.String())
		}
	}
	var stderr strings.Builder
	code := runMain(t.Context(), []string{"serve", "--max-n", "many"}, io.Discard, &stderr)
	if last := lastLine(stderr.String()); code != 1 || !strings.Contains(last, `invalid value "many" for flag -max-n`) || strings.Count(stderr.String(), "\n") != 1 {
		t.Errorf("serve --max-n many: exit %d, stderr %q", code, stderr.String())
	}
}

// TestServe_adminDisabledWarning: a server that has keys (or listens beyond
// loopback) but no admin key says at start that its admin routes are
// disabled and how to enable them.
func TestServe_adminDisabledWarning(t *testing.T) {
	const disabled = "admin routes and item deletes are disabled"
	for _, c := range []struct {
		cfg  Config
		want []string // substrings, one per warning, in order
	}{
		{Config{Addr: "0.0.0.0:8080", AppKey: testAppKey}, []string{disabled}},
		{Config{Addr: "10.1.2.3:8080", AppKey: testAppKey}, []string{disabled}},
		{Config{Addr: "127.0.0.1:8080", AppKey: testAppKey}, []string{disabled}},
		{Config{Addr: "0.0.0.0:8080", Insecure: true}, []string{"every data route is open", disabled}},
		{Config{Addr: "127.0.0.1:8080"}, []string{"every route is open"}},
		{Config{Addr: "0.0.0.0:8080", AppKey: testAppKey, AdminKey: testAdminKey}, nil},
		{Config{Addr: "0.0.0.0:8080", AdminKey: testAdminKey}, nil},
	} {
		got := exposureWarnings(c.cfg)
		ok := len(got) == len(c.want)
		for k := 0; ok && k < len(got); k++ {
			ok = strings.Contains(got[k], c.want[k])
		}
		if ok && len(got) > 0 && strings.Contains(got[len(got)-1], disabled) {
			ok = strings.Contains(got[len(got)-1], "--admin-key")
		}
		if !ok {
			t.Errorf("addr %s app %q admin %q insecure %v: warnings %q, want %q", c.cfg.Addr, c.cfg.AppKey, c.cfg.AdminKey, c.cfg.Insecure, got, c.want)
		}
	}
	var log strings.Builder
	a := startApp(t, func(c *Config) {
		c.AppKey = testAppKey
		c.Logger = slog.New(slog.NewTextHandler(&log, nil))
	})
	a.stopNow(t) // Run logs too; read the log once it has returned
	if !strings.Contains(log.String(), "level=WARN msg=\""+disabled) {
		t.Errorf("NewApp with only an app key logged %q, want the warning", log.String())
	}
}

// TestServeFlags_coldSlots: --cold-slots-per-10 defaults to 1, 0 turns the
// cold slots off (Config's zero value means the default, so "off" is
// negative there), and values outside 0..10 are refused.
func TestServeFlags_coldSlots(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want int
	}{
		{nil, 1},
		{[]string{"--cold-slots-per-10", "3"}, 3},
		{[]string{"--cold-slots-per-10", "0"}, -1},
	} {
		c, err := parseServeFlags(tc.args, io.Discard)
		if err != nil || c.ColdSlotsPer10 != tc.want {
			t.Errorf("%v: ColdSlotsPer10 %d (err %v), want %d", tc.args, c.ColdSlotsPer10, err, tc.want)
		}
	}
	t.Setenv("RECSYS_COLD_SLOTS_PER_10", "2")
	if c, err := parseServeFlags(nil, io.Discard); err != nil || c.ColdSlotsPer10 != 2 {
		t.Errorf("env 2: ColdSlotsPer10 %d (err %v)", c.ColdSlotsPer10, err)
	}
	for _, bad := range []string{"-1", "11"} {
		if _, err := parseServeFlags([]string{"--cold-slots-per-10", bad}, io.Discard); err == nil || !strings.Contains(err.Error(), "--cold-slots-per-10") {
			t.Errorf("--cold-slots-per-10 %s: err %v, want one naming the flag", bad, err)
		}
	}
}

// TestServeFlags_online: the online flags' defaults, and the values they
// refuse.
func TestServeFlags_online(t *testing.T) {
	c, err := parseServeFlags(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.Online.Off || c.Online.Window != 30*time.Minute || c.Online.Sample != 1 || c.Online.Retention != 24*time.Hour ||
		!slices.Equal(c.Online.ConversionTypes, []string{"purchase"}) {
		t.Fatalf("defaults: %+v", c.Online)
	}
	c, err = parseServeFlags([]string{"--online=false", "--attribution-window", "2h", "--impression-sample", "0.25",
		"--impression-retention", "2h", "--conversion-types", "purchase,cart"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if want := (OnlineConfig{Off: true, Window: 2 * time.Hour, Sample: 0.25, Retention: 2 * time.Hour, ConversionTypes: []string{"purchase", "cart"}}); !reflect.DeepEqual(c.Online, want) {
		t.Fatalf("parsed %+v, want %+v", c.Online, want)
	}
	if c, err = parseServeFlags([]string{"--impression-retention", "0"}, io.Discard); err != nil || c.Online.Retention >= 0 {
		t.Fatalf("--impression-retention 0: %v, retention %v; want every list kept (negative)", err, c.Online.Retention)
	}
	// A window past the default retention, which is not set, stretches it.
	if c, err = parseServeFlags([]string{"--attribution-window", "48h"}, io.Discard); err != nil || c.Online.Retention != 48*time.Hour {
		t.Fatalf("--attribution-window 48h alone: %v, retention %v; want 48h", err, c.Online.Retention)
	}
	t.Setenv("RECSYS_IMPRESSION_RETENTION", "1h")
	if _, err = parseServeFlags([]string{"--attribution-window", "2h"}, io.Discard); err == nil || !strings.Contains(err.Error(), "shorter than --attribution-window") {
		t.Fatalf("RECSYS_IMPRESSION_RETENTION=1h with a 2h window: %v, want a refusal", err)
	}
	for _, bad := range []struct {
		args []string
		says string
	}{
		{[]string{"--attribution-window", "0s"}, "--attribution-window"},
		{[]string{"--impression-sample", "0"}, "--impression-sample"},
		{[]string{"--impression-sample", "1.5"}, "--impression-sample"},
		{[]string{"--impression-retention", "-1h"}, "--impression-retention must not be negative"},
		{[]string{"--impression-retention", "10m"}, "shorter than --attribution-window 30m0s"},
		{[]string{"--conversion-types", "purchase,order"}, `"order" is not an event type`},
	} {
		if _, err := parseServeFlags(bad.args, io.Discard); err == nil || !strings.Contains(err.Error(), bad.says) {
			t.Errorf("%v: err %v, want one saying %q", bad.args, err, bad.says)
		}
	}
}

// TestServeFlags_serveBudget: --serve-budget defaults to mean=0.6ms,p99=5ms,
// takes its default from RECSYS_SERVE_BUDGET, turns off with off, and a
// budget that does not parse is refused naming the flag, by serve and by
// train.
func TestServeFlags_serveBudget(t *testing.T) {
	clearRecsysEnv(t)
	c, err := parseServeFlags(nil, io.Discard)
	if err != nil || c.Jobs.Budget != api.DefaultServeBudget {
		t.Fatalf("default: %+v, %v; want %+v", c.Jobs.Budget, err, api.DefaultServeBudget)
	}
	if c, err = parseServeFlags([]string{"--serve-budget", "off"}, io.Discard); err != nil || c.Jobs.Budget != (api.ServeBudget{}) {
		t.Fatalf("off: %+v, %v; want no bound", c.Jobs.Budget, err)
	}
	t.Setenv("RECSYS_SERVE_BUDGET", "p99=10ms")
	if c, err = parseServeFlags(nil, io.Discard); err != nil || c.Jobs.Budget != (api.ServeBudget{P99MS: 10}) {
		t.Fatalf("RECSYS_SERVE_BUDGET=p99=10ms: %+v, %v", c.Jobs.Budget, err)
	}
	if c, err = parseServeFlags([]string{"--serve-budget", "mean=1ms"}, io.Discard); err != nil || c.Jobs.Budget != (api.ServeBudget{MeanMS: 1}) {
		t.Fatalf("the flag over the variable: %+v, %v", c.Jobs.Budget, err)
	}
	if _, err := parseServeFlags([]string{"--serve-budget", "mean=fast"}, io.Discard); err == nil || !strings.HasPrefix(err.Error(), "--serve-budget: ") {
		t.Fatalf("serve --serve-budget mean=fast: %v, want an error naming the flag", err)
	}
	var stderr strings.Builder
	if code := runMain(t.Context(), []string{"train", "--db", filepath.Join(t.TempDir(), "x.db"), "--serve-budget", "p50=1ms"}, io.Discard, &stderr); code != 1 || !strings.Contains(stderr.String(), "--serve-budget: ") {
		t.Fatalf("train --serve-budget p50=1ms: exit %d, %q; want an error naming the flag", code, stderr.String())
	}
}

// TestServeFlags_autoAndTrainBudget: auto mode is on by default for the
// triggers and the first training, off with --auto=false or
// RECSYS_AUTO=0; --train-budget (default 30m) and --train-memory (default
// half the machine's memory) parse, from the flags and the environment,
// and a bad value is an error naming the flag, in serve and in train.
func TestServeFlags_autoAndTrainBudget(t *testing.T) {
	clearRecsysEnv(t)
	c, err := parseServeFlags(nil, io.Discard)
	half := machineMemory() / 2
	if err != nil || !c.Jobs.Auto || c.Jobs.Train.Budget != (api.TrainBudget{Time: 30 * time.Minute, Memory: half}) {
		t.Fatalf("defaults: auto %v, training budget %+v, %v; want auto on, 30m and %d bytes", c.Jobs.Auto, c.Jobs.Train.Budget, err, half)
	}
	if half <= 0 {
		t.Fatalf("the machine's memory is unknown here: %d", machineMemory())
	}
	if c, err = parseServeFlags([]string{"--auto=false", "--train-budget", "off", "--train-memory", "0"}, io.Discard); err != nil || c.Jobs.Auto || c.Jobs.Train.Budget != (api.TrainBudget{}) {
		t.Fatalf("--auto=false, off, 0: auto %v, %+v, %v", c.Jobs.Auto, c.Jobs.Train.Budget, err)
	}
	t.Setenv("RECSYS_AUTO", "0")
	t.Setenv("RECSYS_TRAIN_BUDGET", "1h30m")
	t.Setenv("RECSYS_TRAIN_MEMORY", "12GiB")
	if c, err = parseServeFlags(nil, io.Discard); err != nil || c.Jobs.Auto || c.Jobs.Train.Budget != (api.TrainBudget{Time: 90 * time.Minute, Memory: 12 << 30}) {
		t.Fatalf("RECSYS_AUTO=0, RECSYS_TRAIN_BUDGET=1h30m, RECSYS_TRAIN_MEMORY=12GiB: auto %v, %+v, %v", c.Jobs.Auto, c.Jobs.Train.Budget, err)
	}
	if c, err = parseServeFlags([]string{"--auto", "--train-memory", "25%"}, io.Discard); err != nil || !c.Jobs.Auto || c.Jobs.Train.Budget.Memory != machineMemory()/4 {
		t.Fatalf("--auto --train-memory 25%%: auto %v, %+v, %v", c.Jobs.Auto, c.Jobs.Train.Budget, err)
	}
	for _, bad := range []struct{ flag, value string }{
		{"--train-budget", "soon"}, {"--train-budget", "-5m"}, {"--train-memory", "lots"}, {"--train-memory", "12XB"},
		{"--train-memory", "-1GiB"}, {"--train-memory", "150%"}, {"--train-memory", "0%"},
	} {
		if _, err := parseServeFlags([]string{bad.flag, bad.value}, io.Discard); err == nil || !strings.HasPrefix(err.Error(), bad.flag+": ") || !strings.Contains(err.Error(), bad.value) {
			t.Errorf("serve %s %s: %v, want an error naming the flag and the value", bad.flag, bad.value, err)
		}
		var stderr strings.Builder
		if code := runMain(t.Context(), []string{"train", "--db", filepath.Join(t.TempDir(), "x.db"), bad.flag, bad.value}, io.Discard, &stderr); code != 1 || !strings.Contains(stderr.String(), bad.flag+": ") {
			t.Errorf("train %s %s: exit %d, %q; want an error naming the flag", bad.flag, bad.value, code, stderr.String())
		}
	}
}

// TestTrainMemory_sizes: the sizes --train-memory reads, and the machine's
// memory read from /proc/meminfo and a cgroup's memory.max.
func TestTrainMemory_sizes(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
	}{
		{"12GiB", 12 << 30}, {"12 gib", 12 << 30}, {"1.5GiB", 3 << 29}, {"512MiB", 512 << 20}, {"4000000000", 4e9},
		{"4GB", 4e9}, {"2TiB", 2 << 40}, {"100B", 100}, {"off", 0}, {"0", 0}, {"50%", 500}, {"12.5%", 125},
	} {
		if got, err := parseTrainMemory(c.in, 1000); err != nil || got != c.want {
			t.Errorf("%q: %d, %v; want %d", c.in, got, err, c.want)
		}
	}
	meminfo := "MemTotal:       24683548 kB\nMemFree:         1000 kB\n"
	if got := memTotal(meminfo); got != 24683548*1024 {
		t.Errorf("MemTotal: %d, want %d", got, 24683548*1024)
	}
	if got := memTotal("MemFree: 1 kB\n"); got != 0 {
		t.Errorf("no MemTotal: %d", got)
	}
	if got := cgroupLimit("max\n"); got != 0 {
		t.Errorf("memory.max max: %d, want no limit", got)
	}
	if got := cgroupLimit("8589934592\n"); got != 8<<30 {
		t.Errorf("memory.max 8 GiB: %d", got)
	}
	for _, c := range []struct {
		n    int64
		want string
	}{{512, "512 B"}, {12 << 30, "12 GiB"}, {44_853_084_160, "41.8 GiB"}, {8_000_000_000_000, "7.3 TiB"}, {1536, "1.5 KiB"}} {
		if got := api.FormatBytes(c.n); got != c.want {
			t.Errorf("FormatBytes(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}
