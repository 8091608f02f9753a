package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/jobs"
	"github.com/recsys-engine/recsys/recsys/eval"
	"github.com/recsys-engine/recsys/recsys/serving"
)

// runTrain fits models on the stored data as a recorded job, persists them
// and sets the active model; a server started afterwards serves them.
func runTrain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("train", flag.ContinueOnError)
	fs.SetOutput(stderr)
	db := dbFlag(fs, "./recsys.db", "the `database`: a bbolt file, or postgres://user:pass@host:port/db (env RECSYS_DB)")
	models := fs.String("models", strings.Join(jobs.DefaultModels, ","), "models to fit, comma-separated, or all")
	auto := fs.Bool("auto", false, "activate the model with the best validation ADG; without --models, fit the neighbourhood models, every FEBR variant and the matrix factorisations")
	statsOut := fs.String("stats", "", "write the time and peak memory of every stage as JSON to this file")
	valUsers := fs.Int("validation-users", eval.DefaultValidationUsers, "validate each grid point on a fixed-seed sample of this many users when there are more (0: all)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the training to this file (go tool pprof)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
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
	sched := jobs.NewScheduler(st, eng, jobs.Options{
		Models: names,
		Train:  train,
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
	fmt.Fprintf(stdout, "trained %d models in %.1fs (job %s)\n", len(job.Models), time.Since(start).Seconds(), job.ID)
	if job.Activated != "" {
		fmt.Fprintf(stdout, "activated %s: the best validation ADG\n", job.Activated)
	}
	fmt.Fprintf(stdout, "%-15s %-8s %-28s %8s %8s %8s\n", "model", "version", "params", "val ADG", "val MAP", "seconds")
	for _, m := range infos {
		if !strings.Contains(strings.Join(job.Versions, ","), m.Name+"@"+m.Version) {
			continue
		}
		active := ""
		if m.Active {
			active = "  (active)"
		}
		fmt.Fprintf(stdout, "%-15s %-8s %-28s %8.4f %8.4f %8.1f%s\n", m.Name, m.Version, formatParams(m.Params),
			m.Validation["adg"], m.Validation["map"], m.TrainSeconds, active)
	}
	stats := trainStats{Seconds: time.Since(start).Seconds(), CPUSeconds: cpuSeconds(), PeakRSS: mem.overall}
	fmt.Fprintf(stdout, "%-24s %8s %8s %13s\n", "stage", "seconds", "CPU s", "peak RSS MiB")
	for _, sg := range job.Stages {
		peak, cpu := mem.peaks[sg.Name], mem.cpu[sg.Name]
		stats.Stages = append(stats.Stages, stageStats{Name: sg.Name, Seconds: sg.Seconds, CPUSeconds: cpu, PeakRSS: peak})
		fmt.Fprintf(stdout, "%-24s %8.1f %8.1f %13.0f\n", sg.Name, sg.Seconds, cpu, float64(peak)/(1<<20))
	}
	fmt.Fprintf(stdout, "%-24s %8.1f %8.1f %13.0f\n", "total", stats.Seconds, stats.CPUSeconds, float64(stats.PeakRSS)/(1<<20))
	if *statsOut != "" {
		return writeJSONFile(*statsOut, stats)
	}
	return nil
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
