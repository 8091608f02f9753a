package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/recsys-engine/recsys/retrieval"
	"github.com/recsys-engine/recsys/retrieval/eval"
)

// runEvalRetrieval implements `recsys eval-retrieval` (docs/design.md#cli): it
// compares learned metrics with the Euclidean baseline on a labelled CSV
// (seed 002 §5.1 protocol), prints the table and can write the JSON report.
func runEvalRetrieval(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("eval-retrieval", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		data     = fs.String("data", "", "CSV file with a header row, numeric features and a class column (with --coldstart: the data set folder)")
		label    = fs.String("label", "label", "name of the class column")
		methods  = fs.String("methods", "all", "comma-separated methods, or all ("+strings.Join(retrieval.Methods, ",")+")")
		splits   = fs.Int("splits", 10, "number of random 80/20 train/test splits")
		seed     = fs.Int64("seed", 1, "random seed of the splits and learners")
		jsonOut  = fs.String("json", "", "write the report as JSON to this file")
		maxTrain = fs.Int("max-train", 0, "learn MLR/R-MLR metrics from at most this many training items (0 = all)")
		frmlIter = fs.Int("frml-iterations", 0, "FRML queries drawn per fit (default max(20000, 20·n))")
		rounds   = fs.Int("mlr-rounds", 0, "cap on MLR/R-MLR cutting-plane rounds (default 100)")
		cGrid    = fs.String("c-grid", "", "comma-separated MLR/R-MLR C values (default 0.1,1,10,100,1000)")
		rankGrid = fs.String("rank-grid", "", "comma-separated FRML ranks m (default ⌈d/2⌉,d)")
		kapGrid  = fs.String("kappa-grid", "", "comma-separated FRML-WARP κ values (default 1,0.1)")
		workers  = fs.Int("workers", 0, "splits evaluated in parallel (default GOMAXPROCS)")
		cold     = fs.Bool("coldstart", false, "instead: content vs collaborative neighbours and cold-start REC@10 on an interaction data set (--data is its folder)")
		format   = fs.String("format", "movielens", "with --coldstart: data format (movielens, lastfm, csv)")
		holdOut  = fs.Float64("holdout", 0.1, "with --coldstart: share of items made cold per split")
		agg      = fs.String("aggregate", "min", "with --coldstart: a cold item's score from its distances to the history: min (the service) or sum-exp")
		history  = fs.Int("history", 20, "with --coldstart: latest positives per user that seed the cold-start search")
	)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *data == "" || *label == "" {
		fs.Usage()
		return errors.New("eval-retrieval: --data and --label are required")
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("eval-retrieval: unexpected arguments %q", fs.Args())
	}
	if *cold {
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		co := eval.ColdStartOptions{HoldOut: *holdOut, Seed: *seed, FRMLIterations: *frmlIter, Aggregate: *agg, History: *history}
		if set["splits"] {
			co.Splits = *splits
		}
		return runColdStart(ctx, *data, *format, *methods, *jsonOut, co, stdout, stderr)
	}
	opt := eval.Options{
		Splits: *splits, Seed: *seed, MaxTrain: *maxTrain, FRMLIterations: *frmlIter,
		MLRMaxRounds: *rounds, Workers: *workers,
	}
	if *methods != "all" && *methods != "" {
		for _, m := range strings.Split(*methods, ",") {
			if m = strings.TrimSpace(m); m == "" {
				continue
			}
			if err := retrieval.CheckMethod(m); err != nil {
				return fmt.Errorf("eval-retrieval: %w", err)
			}
			opt.Methods = append(opt.Methods, m)
		}
	}
	if *cGrid != "" {
		for _, f := range strings.Split(*cGrid, ",") {
			c, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
			if err != nil || c <= 0 {
				return fmt.Errorf("eval-retrieval: --c-grid: bad value %q", f)
			}
			opt.Grid.C = append(opt.Grid.C, c)
		}
	}
	if *rankGrid != "" {
		for _, f := range strings.Split(*rankGrid, ",") {
			m, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || m <= 0 {
				return fmt.Errorf("eval-retrieval: --rank-grid: bad value %q", f)
			}
			opt.Grid.Rank = append(opt.Grid.Rank, m)
		}
	}
	if *kapGrid != "" {
		for _, f := range strings.Split(*kapGrid, ",") {
			k, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
			if err != nil || k <= 0 || k > 1 {
				return fmt.Errorf("eval-retrieval: --kappa-grid: bad value %q (want 0 < κ ≤ 1)", f)
			}
			opt.Grid.Kappa = append(opt.Grid.Kappa, k)
		}
	}
	ds, err := eval.ReadCSV(*data, *label)
	if err != nil {
		return fmt.Errorf("eval-retrieval: %w", err)
	}
	fmt.Fprintf(stderr, "eval-retrieval: %s: %d items, %d features, %d classes\n", ds.Name, len(ds.X), len(ds.Features), len(ds.Classes))
	opt.Progress = func(line string) { fmt.Fprintln(stderr, "eval-retrieval:", line) }
	rep, err := eval.Evaluate(ctx, ds, opt)
	if err != nil {
		return fmt.Errorf("eval-retrieval: %w", err)
	}
	rep.CreatedAt = time.Now().UTC()
	return printReport("eval-retrieval", stdout, rep, eval.WriteTable, *jsonOut)
}

// runColdStart is `recsys eval-retrieval --coldstart`: retrieval/eval.ColdStart
// on an interaction data set with item features.
func runColdStart(ctx context.Context, data, format, methods, jsonOut string, opt eval.ColdStartOptions, stdout, stderr io.Writer) error {
	if opt.HoldOut <= 0 || opt.HoldOut >= 0.9 {
		return fmt.Errorf("eval-retrieval: --holdout must be in (0, 0.9), got %g", opt.HoldOut)
	}
	if opt.Aggregate != eval.AggregateMin && opt.Aggregate != eval.AggregateSumExp {
		return fmt.Errorf("eval-retrieval: --aggregate must be %s or %s, got %q", eval.AggregateMin, eval.AggregateSumExp, opt.Aggregate)
	}
	if opt.History <= 0 {
		return fmt.Errorf("eval-retrieval: --history must be positive, got %d", opt.History)
	}
	if methods != "all" && methods != "" {
		for _, m := range strings.Split(methods, ",") {
			if m = strings.TrimSpace(m); m == "" {
				continue
			}
			if err := retrieval.CheckMethod(m); err != nil {
				return fmt.Errorf("eval-retrieval: %w", err)
			}
			opt.Methods = append(opt.Methods, m)
		}
	}
	in, err := eval.LoadInteractions(format, data)
	if err != nil {
		return fmt.Errorf("eval-retrieval: %w", err)
	}
	fmt.Fprintf(stderr, "eval-retrieval: %s: %d users, %d items, %d positives, %d features\n", in.Name, in.Users, in.Items, len(in.Pairs), len(in.FeatureNames))
	opt.Progress = func(line string) { fmt.Fprintln(stderr, "eval-retrieval:", line) }
	rep, err := eval.ColdStart(ctx, in, opt)
	if err != nil {
		return fmt.Errorf("eval-retrieval: %w", err)
	}
	rep.CreatedAt = time.Now().UTC()
	return printReport("eval-retrieval", stdout, rep, eval.WriteColdStartTable, jsonOut)
}
