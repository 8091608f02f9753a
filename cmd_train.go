package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/jobs"
	"github.com/recsys-engine/recsys/recsys/eval"
	"github.com/recsys-engine/recsys/recsys/serving"
)

// runTrain fits models on the stored data as a recorded job, persists them
// and sets the active model; a server started afterwards serves them.
func runTrain(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	fs := flag.NewFlagSet("train", flag.ContinueOnError)
	fs.SetOutput(stderr)
	db := dbFlag(fs, "./recsys.db", "the `database`: a bbolt file, or postgres://user:pass@host:port/db (env RECSYS_DB)")
	models := fs.String("models", strings.Join(jobs.DefaultModels, ","), "models to fit, comma-separated, or all")
	auto := fs.Bool("auto", false, "activate the model with the best validation ADG; without --models, fit the default models and auto mode's other candidates (ease, rp3beta, wrmf, ials, febr-blend) within --train-budget")
	statsOut := fs.String("stats", "", "write the time and peak memory of every stage, and the records of the models stored (their serving cost included), as JSON to this file")
	valUsers := fs.Int("validation-users", eval.DefaultValidationUsers, "validate each grid point on a fixed-seed sample of this many users when there are more (0: all)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the training to this file (go tool pprof)")
	memProfile := fs.String("memprofile", "", "write a heap profile to this file at the training's peak of live heap (go tool pprof)")
	budgetSpec := fs.String("serve-budget", envOr("RECSYS_SERVE_BUDGET", api.DefaultServeBudget.String()), serveBudgetUsage+" (env RECSYS_SERVE_BUDGET)")
	trainTime := fs.String("train-budget", envOr("RECSYS_TRAIN_BUDGET", api.FormatTrainTime(api.DefaultTrainTime)), trainBudgetUsage+" (env RECSYS_TRAIN_BUDGET)")
	trainMemory := fs.String("train-memory", envOr("RECSYS_TRAIN_MEMORY", defaultTrainMemory), trainMemoryUsage+" (env RECSYS_TRAIN_MEMORY)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	budget, err := api.ParseServeBudget(*budgetSpec)
	if err != nil {
		return fmt.Errorf("--serve-budget: %w", err)
	}
	trainBudget, err := parseTrainBudget(*trainTime, *trainMemory)
	if err != nil {
		return err
	}
	limitMemory(machineMemory(), trainBudget.Memory, mappedSize(*db))
	stop, err := startCPUProfile(*cpuProfile)
	if err != nil {
		return err
	}
	defer stop()
	if *memProfile != "" {
		stop := peakHeapProfile(*memProfile)
		defer func() {
			if perr := stop(); perr != nil && err == nil {
				err = perr
			}
		}()
	}
	modelsSet := false
	fs.Visit(func(f *flag.Flag) { modelsSet = modelsSet || f.Name == "models" })
	if fs.NArg() > 0 {
		return fmt.Errorf("train takes no arguments, got %q", fs.Args())
	}
	names, err := parseModels(*models)
	if err != nil {
		return fmt.Errorf("--models: %w", err)
	}
	if err := checkDatabase(*db); err != nil {
		return err
	}
	st, err := openStore(ctx, *db, api.DefaultPolicy(), 0)
	if err != nil {
		return err
	}
	defer st.Close()
	eng := serving.NewEngine(st, serving.EngineOptions{})
	for _, err := range eng.LoadPersisted(ctx, st) {
		fmt.Fprintln(stderr, "warning:", err)
	}
	bar := newProgress(stderr, 1000, "training")
	var lastStage string
	mem := newStageMemory()
	train := jobs.DefaultTrainOptions
	train.ValidationUsers = validationUsers(*valUsers)
	train.Budget = trainBudget
	sched := jobs.NewScheduler(st, eng, jobs.Options{
		Models: names,
		Train:  train,
		Budget: budget,
		Logger: slog.New(slog.DiscardHandler),
		OnProgress: func(j api.Job) {
			if bar.bar == nil && j.Stage != lastStage && j.Stage != "" {
				fmt.Fprintf(stderr, "%3.0f%% %s\n", 100*j.Progress, j.Stage)
			}
			if j.Stage != lastStage {
				mem.next(j.Stage)
			}
			lastStage = j.Stage
			bar.set(int64(1000*j.Progress), j.Stage)
		},
	})
	if err := sched.Recover(ctx); err != nil {
		return err
	}
	start := time.Now()
	req := api.TrainRequest{Models: names, Auto: *auto, Trigger: "cli"}
	if *auto && !modelsSet {
		req.Models = nil
	}
	job, err := sched.SubmitTrain(ctx, req)
	if err != nil {
		return err
	}
	sched.RunQueued(ctx)
	mem.next("")
	bar.finish()
	if job, err = st.Job(context.WithoutCancel(ctx), job.ID); err != nil {
		return err
	}
	if job.State != api.JobSucceeded {
		return fmt.Errorf("training job %s %s: %s", job.ID, job.State, job.Error)
	}
	infos, err := st.Models(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "trained %d of %d models in %.1fs (job %s)\n", len(job.Versions), len(job.Models), time.Since(start).Seconds(), job.ID)
	for _, sk := range job.Skipped {
		fmt.Fprintf(stdout, "skipped %s: %s\n", sk.Model, sk.Reason)
	}
	printChoice(stdout, job, budget)
	fmt.Fprintf(stdout, "%-15s %-8s %-28s %8s %8s %8s %9s %9s\n", "model", "version", "params", "val ADG", "val MAP", "seconds", "serve ms", "p99 ms")
	var trained []api.ModelInfo
	for _, m := range infos {
		if !strings.Contains(strings.Join(job.Versions, ","), m.Name+"@"+m.Version) {
			continue
		}
		trained = append(trained, m)
		active := ""
		if m.Active {
			active = "  (active)"
		}
		mean, p99 := "–", "–"
		if c := m.ServingCost; c != nil {
			mean, p99 = fmt.Sprintf("%.3f", c.MeanMS), fmt.Sprintf("%.3f", c.P99MS)
		}
		fmt.Fprintf(stdout, "%-15s %-8s %-28s %8.4f %8.4f %8.1f %9s %9s%s\n", m.Name, m.Version, formatParams(m.Params),
			m.Validation["adg"], m.Validation["map"], m.TrainSeconds, mean, p99, active)
	}
	stats := trainStats{Seconds: time.Since(start).Seconds(), CPUSeconds: cpuSeconds(), PeakRSS: mem.overall, Models: trained, Skipped: job.Skipped}
	fmt.Fprintf(stdout, "%-24s %8s %8s %13s\n", "stage", "seconds", "CPU s", "peak RSS MiB")
	for _, sg := range job.Stages {
		peak, cpu := mem.peaks[sg.Name], mem.cpu[sg.Name]
		stats.Stages = append(stats.Stages, stageStats{Name: sg.Name, Seconds: sg.Seconds, CPUSeconds: cpu, PeakRSS: peak})
		fmt.Fprintf(stdout, "%-24s %8.1f %8.1f %13.0f\n", sg.Name, sg.Seconds, cpu, float64(peak)/(1<<20))
	}
	fmt.Fprintf(stdout, "%-24s %8.1f %8.1f %13.0f\n", "total", stats.Seconds, stats.CPUSeconds, float64(stats.PeakRSS)/(1<<20))
	if *statsOut != "" {
		if err := writeJSONFile(*statsOut, stats); err != nil {
			return err
		}
	}
	if len(job.Versions) == 0 {
		return fmt.Errorf("training job %s fitted no model: every one was skipped (the reasons are above)", job.ID)
	}
	return nil
}

// printChoice says which model the job activated and why, and which
// candidates it passed over for their serving cost.
func printChoice(w io.Writer, job api.Job, budget api.ServeBudget) {
	overActive := false
	for _, o := range job.OverBudget {
		overActive = overActive || o.Model == job.Activated
		fmt.Fprintf(w, "over the serving budget %s: %s (mean %.3f ms, p99 %.3f ms, %.1f× the budget)\n", o.Budget, o.Model, o.MeanMS, o.P99MS, o.Factor)
	}
	switch {
	case job.Activated == "":
	case overActive:
		fmt.Fprintf(w, "activated %s: no model is within the serving budget %s, and it is the cheapest\n", job.Activated, budget)
	default:
		fmt.Fprintf(w, "activated %s: the best validation ADG within the serving budget %s\n", job.Activated, budget)
	}
}

func formatParams(p map[string]float64) string {
	var parts []string
	for _, k := range []string{"k", "l1", "l2", "lambda", "factors"} {
		if v, ok := p[k]; ok {
			parts = append(parts, fmt.Sprintf("%s=%g", k, v))
		}
	}
	return strings.Join(parts, " ")
}
