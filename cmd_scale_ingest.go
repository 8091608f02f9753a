package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// scaleIngestConfig is the live-ingest stage of `recsys scale`.
type scaleIngestConfig struct {
	Duration      time.Duration
	Concurrency   int
	Batch         int
	ExistingUsers bool
}

// IngestSample is the server's state at one second of the live ingest.
type IngestSample struct {
	Second     float64 `json:"second"`
	TailEvents int64   `json:"tail_events"`
	RSS        int64   `json:"rss_bytes"`
	LoadAvg    string  `json:"loadavg"`
}

// IngestResult is what the live-ingest stage measured: the load
// generator's result (events/s acknowledged, POST latency), the applier's
// lag (unapplied events) over the run and how long it took to catch up
// after it, the server's memory, the files' growth and the load.
type IngestResult struct {
	Clients       int            `json:"clients"`
	Batch         int            `json:"batch"`
	ExistingUsers bool           `json:"existing_users"`
	StartSec      float64        `json:"server_start_seconds"`
	Bench         *BenchResult   `json:"bench"`
	Samples       []IngestSample `json:"samples"`
	MaxTail       int64          `json:"max_tail_events"`
	EndTail       int64          `json:"tail_events_at_end"`
	DrainSec      float64        `json:"drain_seconds"`
	PeakRSS       int64          `json:"peak_rss_bytes"`
	ServerCPUSec  float64        `json:"server_cpu_seconds"`
	EventsAdded   int64          `json:"events_added"`
	LogBytes      int64          `json:"event_log_bytes"`
	DBBytesBefore int64          `json:"db_bytes_before"`
	DBBytesAfter  int64          `json:"db_bytes_after"`
	LoadAvgStart  string         `json:"loadavg_start"`
	LoadAvgEnd    string         `json:"loadavg_end"`
}

// scaleIngest serves db and posts batches of events to it for c.Duration
// with c.Concurrency clients, sampling the applier's lag and the server's
// RSS every second; then waits until the applier has caught up.
func scaleIngest(ctx context.Context, c scaleIngestConfig, exe, db string, users int, seed uint64, log func(string, ...any), stderr io.Writer) (*IngestResult, error) {
	res := &IngestResult{Clients: c.Concurrency, Batch: c.Batch, ExistingUsers: c.ExistingUsers, DBBytesBefore: fileSize(db)}
	srv, err := startScaleServer(ctx, exe, db, "/healthz")
	if err != nil {
		return nil, err
	}
	defer srv.stop()
	res.StartSec, res.LoadAvgStart = srv.startSec, loadAvg()
	log("live ingest: %d clients × %d events for %v (load %s)", c.Concurrency, c.Batch, c.Duration, res.LoadAvgStart)
	base := "http://" + srv.addr
	sample := func(t0 time.Time) IngestSample {
		s := IngestSample{Second: time.Since(t0).Seconds(), RSS: procMemory(srv.cmd.Process.Pid).RSS, LoadAvg: loadAvg()}
		s.TailEvents, _ = serverMetric(base, "recsys_ingest_tail_events")
		return s
	}
	done := make(chan struct{})
	sampled := make(chan struct{})
	cpu0 := procCPU(srv.cmd.Process.Pid)
	events0, _ := serverMetric(base, "recsys_stored_events")
	t0 := time.Now()
	go func() {
		defer close(sampled)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				res.Samples = append(res.Samples, sample(t0))
			}
		}
	}()
	bc := benchConfig{Addr: srv.addr, Duration: c.Duration, Warmup: 2 * time.Second, Concurrency: c.Concurrency,
		Mix: map[benchOp]int{opIngest: 1}, Batch: c.Batch, Users: users, UserPrefix: "u", IngestUsers: c.ExistingUsers, N: 10, Seed: seed}
	res.Bench, err = bench(ctx, bc, stderr)
	close(done)
	<-sampled
	if err != nil {
		return nil, err
	}
	end := sample(t0)
	res.EndTail = end.TailEvents
	t1 := time.Now()
	for end.TailEvents > 0 && time.Since(t1) < 10*time.Minute {
		time.Sleep(100 * time.Millisecond)
		end.TailEvents, _ = serverMetric(base, "recsys_ingest_tail_events")
	}
	res.DrainSec = time.Since(t1).Seconds()
	res.LogBytes, _ = serverMetric(base, "recsys_event_log_bytes")
	for _, s := range res.Samples {
		res.MaxTail = max(res.MaxTail, s.TailEvents)
	}
	res.LoadAvgEnd = loadAvg()
	res.ServerCPUSec = procCPU(srv.cmd.Process.Pid) - cpu0
	if events1, err := serverMetric(base, "recsys_stored_events"); err == nil {
		res.EventsAdded = events1 - events0
	}
	res.PeakRSS = srv.stop()
	res.DBBytesAfter = fileSize(db)
	return res, nil
}

// metricValue reads one unlabelled metric from the server's /metrics.
func serverMetric(base, name string) (int64, error) {
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Get(base + "/metrics")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			return int64(f), err
		}
	}
	return 0, fmt.Errorf("no metric %s", name)
}

func printIngest(w io.Writer, r *IngestResult) {
	who := "one fresh user per batch"
	if r.ExistingUsers {
		who = "users of the data set at random"
	}
	fmt.Fprintf(w, "live ingest: %d clients × %d events (%s), load %s at the start, %s at the end\n",
		r.Clients, r.Batch, who, r.LoadAvgStart, r.LoadAvgEnd)
	printBench(w, r.Bench)
	fmt.Fprintf(w, "applier lag: at most %d events unapplied, %d at the end, caught up %.1fs later\n", r.MaxTail, r.EndTail, r.DrainSec)
	if r.EventsAdded > 0 {
		// CPU time, unlike rates, is not stretched by other processes.
		fmt.Fprintf(w, "server CPU from the first batch until caught up: %.1f s for %d events (warm-up included), %.1f µs per event\n",
			r.ServerCPUSec, r.EventsAdded, 1e6*r.ServerCPUSec/float64(r.EventsAdded))
	}
	fmt.Fprintf(w, "server peak RSS %s; database %s → %s, event log %s\n", mib(r.PeakRSS), mib(r.DBBytesBefore), mib(r.DBBytesAfter), mib(r.LogBytes))
}
