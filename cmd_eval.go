package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/recsys"
	"github.com/recsys-engine/recsys/recsys/dataset"
	"github.com/recsys-engine/recsys/recsys/eval"
	"github.com/recsys-engine/recsys/recsys/febr"
	_ "github.com/recsys-engine/recsys/recsys/mf" // registers bpr, wrmf and mfauc
)

// runEval implements `recsys eval` (docs/design.md#cli): it evaluates models on a
// data set offline, prints a table in the style of dissertation Table 4.3 and writes the JSON
// report and the --dump files.
func runEval(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("eval", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		data     = fs.String("data", "", "data set path (a MovieLens folder, a Last.fm folder or a CSV file)")
		format   = fs.String("format", "", "data format: movielens, lastfm or csv")
		minValue = fs.String("min-value", "", "relevance threshold on the event value (default: the format's)")
		models   = fs.String("models", "all", "comma-separated model names, or all ("+strings.Join(recsys.Names(), ",")+"); febr is FEBRi-slim as in the service, "+eval.FEBRAll+" the seven FEBR variants of Table 4.3")
		folds    = fs.Int("folds", 0, "number of splits (default 3; the time protocol has one, the users protocol at most 5)")
		protocol = fs.String("protocol", eval.Standard, "hold-out protocol: standard, novelty, users (held-out users scored from 80% of their items) or time (each user's latest 20% of positives)")
		seed     = fs.Int64("seed", 1, "random seed of the splits")
		jsonOut  = fs.String("json", "", "write the report as JSON to this file")
		dumpDir  = fs.String("dump", "", "write splits, ranks and top-100 lists under this directory")
		kGrid    = fs.String("k-grid", "", "comma-separated neighbourhood sizes (default 10,20,50,100,200,500,1000)")
		l1Grid   = fs.String("slim-l1", "", "comma-separated SLIM ℓ1 constants (default 10,1,0.1)")
		l2Grid   = fs.String("slim-l2", "", "comma-separated SLIM ℓ2 constants (default 10,1,0.1)")
		fGrid    = fs.String("factor-grid", "", "comma-separated numbers of factors of bpr, wrmf, mfauc (default 5,10,20,50,100,200)")
		lamGrid  = fs.String("febr-lambda", "", "comma-separated FEBR ℓ2 constants λ (default 0.0001,0.001,0.01,0.1)")
		febrEta  = fs.Float64("febr-eta", 0, "FEBR OPT-ADG step size η (default 0.001)")
		febrGam  = fs.Float64("febr-gamma", 0, "FEBR WARP cut-off γ (default 50)")
		febrPat  = fs.Int("febr-patience", 0, "FEBR early stopping: validation evaluations without improvement (default 5)")
		febrEach = fs.Int("febr-eval-every", 0, "FEBR early stopping: iterations between validation evaluations (default 20000)")
		extra    = fs.String("extra", "", "secondary grids, model.key=v1,v2;model.key=v3 (every combination per model named; e.g. ials.lambda=0.01,0.1;ials.alpha0=0.1)")
		valUsers = fs.Int("validation-users", eval.DefaultValidationUsers, "validate each grid point on a fixed-seed sample of this many users when there are more (0: all)")
		febrHold = fs.Float64("febr-holdout", 0, "FEBR: share of each user's positives OPT-ADG ranks, with features from the rest (default 0: Algorithm 4.2 as written)")
		merge    = fs.String("merge", "", "comma-separated JSON reports (--json) of runs on the same data set, protocol, folds and seed: print them as one report with the auto row over all their rows, evaluating nothing")
		extend   = fs.Int("extend-grid", eval.DefaultExtend, "geometric steps (×2 at most) searched past each end of a grid dimension the choice sits at; a choice still at an end is flagged \"(grid edge)\" (0: none, only flag)")
		profile  = fs.String("cpuprofile", "", "write a CPU profile of the evaluation to this file (go tool pprof)")
		budget   = fs.Duration("time-budget", eval.DefaultTimeBudget, "the time budget of each model's search on each fold: a grid point or extension step predicted to end past it is skipped (the first point is always fitted), and the report lists what was skipped and why (settings skipped_by_fold); a blend's base searches share the blend's budget (0: no budget)")
	)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *merge != "" {
		if fs.NArg() > 0 {
			return fmt.Errorf("eval: unexpected arguments %q", fs.Args())
		}
		return mergeReports(stdout, *merge, *jsonOut)
	}
	if *data == "" || *format == "" {
		fs.Usage()
		return errors.New("eval: --data and --format are required")
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("eval: unexpected arguments %q", fs.Args())
	}
	if err := dataset.CheckFormat(*format); err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	stop, err := startCPUProfile(*profile)
	if err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	defer stop()
	if *folds < 0 {
		return fmt.Errorf("eval: --folds must be ≥ 1, not %d", *folds)
	}
	if err := eval.CheckProtocol(*protocol, *folds); err != nil {
		return err
	}
	var minPtr *float64
	if *minValue != "" {
		v, err := strconv.ParseFloat(*minValue, 64)
		if err == nil && (math.IsNaN(v) || math.IsInf(v, 0)) {
			err = fmt.Errorf("%q is not a finite number", *minValue)
		}
		if err != nil {
			return fmt.Errorf("eval: --min-value: %w", err)
		}
		minPtr = &v
	}
	if *extend < 0 {
		return fmt.Errorf("eval: --extend-grid must be ≥ 0, not %d", *extend)
	}
	if *budget < 0 {
		return fmt.Errorf("eval: --time-budget must be ≥ 0, not %s", *budget)
	}
	opt := eval.Options{Folds: *folds, Protocol: *protocol, Seed: *seed, DumpDir: *dumpDir, ValidationUsers: validationUsers(*valUsers), Extend: *extend,
		TimeBudget: *budget}
	if *extend == 0 {
		opt.Extend = -1
	}
	if *febrEta < 0 || *febrGam < 0 || *febrPat < 0 || *febrEach < 0 || *febrHold < 0 || *febrHold >= 1 {
		return errors.New("eval: --febr-eta, --febr-gamma, --febr-patience and --febr-eval-every must be ≥ 0, --febr-holdout in [0, 1)")
	}
	opt.FEBR = febr.Options{LearningRate: *febrEta, Gamma: *febrGam, Patience: *febrPat, EvalEvery: *febrEach, Holdout: *febrHold}
	if *models != "all" && *models != "" {
		for _, name := range strings.Split(*models, ",") {
			if name = strings.TrimSpace(name); name != "" {
				opt.Models = append(opt.Models, name)
			}
		}
	}
	if err := eval.CheckModels(opt.Models); err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	if opt.Grid.K, err = parseList(*kGrid, strconv.Atoi); err != nil {
		return fmt.Errorf("eval: --k-grid: %w", err)
	}
	parseFloat := func(s string) (float64, error) { return strconv.ParseFloat(s, 64) }
	if opt.Grid.L1, err = parseList(*l1Grid, parseFloat); err != nil {
		return fmt.Errorf("eval: --slim-l1: %w", err)
	}
	if opt.Grid.L2, err = parseList(*l2Grid, parseFloat); err != nil {
		return fmt.Errorf("eval: --slim-l2: %w", err)
	}
	if opt.Grid.Factors, err = parseList(*fGrid, strconv.Atoi); err != nil {
		return fmt.Errorf("eval: --factor-grid: %w", err)
	}
	if opt.Grid.Lambda, err = parseList(*lamGrid, parseFloat); err != nil {
		return fmt.Errorf("eval: --febr-lambda: %w", err)
	}
	if *extra != "" {
		if opt.Grid.Extra, err = eval.ParseExtra(*extra, nil); err != nil {
			return fmt.Errorf("eval: --extra: %w", err)
		}
	}

	pos, err := dataset.Positives(*format, *data, minPtr)
	if err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	fmt.Fprintf(stderr, "eval: %s: %d users, %d items, %d positive pairs\n", pos.Name, len(pos.UserIDs), len(pos.ItemIDs), len(pos.Users))
	d := &eval.Dataset{Name: pos.Name, UserIDs: pos.UserIDs, ItemIDs: pos.ItemIDs, Users: pos.Users, Items: pos.Items, Times: pos.Times}

	progress, done := evalProgress(stderr)
	opt.Progress = progress
	rep, err := eval.Run(ctx, d, opt)
	done()
	if err != nil {
		return err
	}
	var short []string
	for _, r := range rep.Rows {
		if r.Settings["skipped_by_fold"] != "" {
			short = append(short, r.Model)
		}
	}
	if len(short) > 0 {
		fmt.Fprintf(stderr, "eval: --time-budget %s left grid points of %s out (settings skipped_by_fold of the --json report)\n", opt.TimeBudget, strings.Join(short, ", "))
	}
	return printReport("eval", stdout, rep, eval.WriteTable, *jsonOut)
}

// parseList parses a comma-separated list; an empty string gives nil.
func parseList[T any](s string, parse func(string) (T, error)) ([]T, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []T
	for _, f := range strings.Split(s, ",") {
		v, err := parse(strings.TrimSpace(f))
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// evalProgress shows a progress bar when stderr is a terminal and plain
// lines otherwise. The returned func ends the display.
func evalProgress(stderr io.Writer) (recsys.ProgressFunc, func()) {
	if f, ok := stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		bar := progressbar.NewOptions(1,
			progressbar.OptionSetWriter(stderr),
			progressbar.OptionShowCount(),
			progressbar.OptionSetWidth(30),
			progressbar.OptionClearOnFinish(),
		)
		return func(stage string, done, total int) {
				bar.ChangeMax(total)
				bar.Describe(stage)
				_ = bar.Set(done)
			}, func() {
				_ = bar.Finish()
			}
	}
	return func(stage string, done, total int) {
		fmt.Fprintf(stderr, "eval: %s %d/%d\n", stage, done, total)
	}, func() {}
}

// mergeReports implements `eval --merge`: the reports of the files in the
// comma-separated list, as one with its auto row (eval.MergeReports).
func mergeReports(stdout io.Writer, files, jsonOut string) error {
	var reps []*api.Report
	for _, name := range strings.Split(files, ",") {
		b, err := os.ReadFile(strings.TrimSpace(name))
		if err != nil {
			return fmt.Errorf("eval: --merge: %w", err)
		}
		var r api.Report
		if err := json.Unmarshal(b, &r); err != nil {
			return fmt.Errorf("eval: --merge: %s: %w", name, err)
		}
		reps = append(reps, &r)
	}
	rep, err := eval.MergeReports(reps)
	if err != nil {
		return err
	}
	return printReport("eval", stdout, rep, eval.WriteTable, jsonOut)
}
