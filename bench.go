package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"recsys/api"
)

// benchOp is one kind of request the load generator sends.
type benchOp string

const (
	opRecommend benchOp = "recommend"
	opSimilar   benchOp = "similar"
	opIngest    benchOp = "ingest"
)

// benchConfig is the load to generate.
type benchConfig struct {
	Addr        string
	Duration    time.Duration
	Warmup      time.Duration
	Concurrency int
	Mix         map[benchOp]int
	Batch       int
	Users       int
	UserPrefix  string
	N           int
	Model       string
	// IngestUsers draws the user of each ingested event at random among
	// the users PREFIX1..PREFIXN (events of existing users, scattered over
	// the store); otherwise each batch is one fresh user's.
	IngestUsers bool
	Key         string
	Seed        uint64
	// Rate, when positive, paces the clients to this many requests per
	// second in all; latency then counts from each request's scheduled
	// time, so a server that falls behind is charged for the wait
	// (no coordinated omission).
	Rate float64
}

// BenchOpResult summarises one operation of a run.
type BenchOpResult struct {
	Op         string  `json:"op"`
	Requests   int     `json:"requests"`
	Errors     int     `json:"errors"`
	Throughput float64 `json:"requests_per_second"`
	EventsPerS float64 `json:"events_per_second,omitempty"`
	P50ms      float64 `json:"p50_ms"`
	P90ms      float64 `json:"p90_ms"`
	P99ms      float64 `json:"p99_ms"`
	Maxms      float64 `json:"max_ms"`
}

// BenchResult is the output of `recsys bench --json`.
type BenchResult struct {
	Addr        string          `json:"addr"`
	Duration    float64         `json:"duration_seconds"`
	Concurrency int             `json:"concurrency"`
	Mix         string          `json:"mix"`
	Rate        float64         `json:"target_rate,omitempty"`
	Ops         []BenchOpResult `json:"ops"`
	Total       BenchOpResult   `json:"total"`
	FirstErrors []string        `json:"first_errors,omitempty"`
}

// benchItems reads up to 10,000 item ids for similar-item and ingest
// requests.
func benchItems(ctx context.Context, client *http.Client, base, key string) ([]string, error) {
	var ids []string
	cursor := ""
	for len(ids) < 10000 {
		u := base + "/items?limit=1000"
		if cursor != "" {
			u += "&cursor=" + url.QueryEscape(cursor)
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		setKey(req, key)
		resp, err := client.Do(req)
		if err != nil {
			return nil, err
		}
		var page api.ItemsOut
		err = json.NewDecoder(resp.Body).Decode(&page)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("GET /items: status %d %v", resp.StatusCode, err)
		}
		for _, it := range page.Items {
			ids = append(ids, it.ID)
		}
		if page.NextCursor == "" {
			break
		}
		cursor = page.NextCursor
	}
	if len(ids) == 0 {
		return nil, errors.New("the server has no items; import data first")
	}
	return ids, nil
}

func setKey(req *http.Request, key string) {
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
}

type benchSample struct {
	op      benchOp
	latency time.Duration
	err     string
}

func bench(ctx context.Context, c benchConfig, log io.Writer) (*BenchResult, error) {
	base := "http://" + c.Addr
	transport := &http.Transport{MaxIdleConns: c.Concurrency * 2, MaxIdleConnsPerHost: c.Concurrency * 2, IdleConnTimeout: time.Minute}
	client := &http.Client{Transport: transport, Timeout: 30 * time.Second}
	items, err := benchItems(ctx, client, base, c.Key)
	if err != nil {
		return nil, err
	}
	var ops []benchOp
	for _, op := range []benchOp{opRecommend, opSimilar, opIngest} {
		for k := 0; k < c.Mix[op]; k++ {
			ops = append(ops, op)
		}
	}
	fmt.Fprintf(log, "bench: %d clients against %s for %v (+%v warm-up), %d items\n", c.Concurrency, c.Addr, c.Duration, c.Warmup, len(items))
	start := time.Now()
	measureFrom := start.Add(c.Warmup)
	end := measureFrom.Add(c.Duration)
	results := make([][]benchSample, c.Concurrency)
	var wg sync.WaitGroup
	for w := 0; w < c.Concurrency; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(c.Seed, uint64(w)))
			var buf bytes.Buffer
			// With a rate, client w sends at start + (w/C + seq)·C/rate.
			var interval time.Duration
			if c.Rate > 0 {
				interval = time.Duration(float64(c.Concurrency) / c.Rate * float64(time.Second))
			}
			for seq := 0; ctx.Err() == nil; seq++ {
				var scheduled time.Time
				if interval > 0 {
					scheduled = start.Add(interval*time.Duration(seq) + interval*time.Duration(w)/time.Duration(c.Concurrency))
					if wait := time.Until(scheduled); wait > 0 {
						time.Sleep(wait)
					}
				}
				if time.Now().After(end) {
					return
				}
				op := ops[rng.IntN(len(ops))]
				req := benchRequest(ctx, c, op, base, items, rng, &buf, w, seq)
				t0 := time.Now()
				if interval > 0 {
					t0 = scheduled
				}
				resp, err := client.Do(req)
				s := benchSample{op: op}
				if err != nil {
					s.err = err.Error()
				} else {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode >= 300 {
						s.err = fmt.Sprintf("%s: status %d", op, resp.StatusCode)
					}
				}
				s.latency = time.Since(t0)
				if t0.After(measureFrom) {
					results[w] = append(results[w], s)
				}
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return summarise(c, results), nil
}

func benchRequest(ctx context.Context, c benchConfig, op benchOp, base string, items []string, rng *rand.Rand, buf *bytes.Buffer, worker, seq int) *http.Request {
	var req *http.Request
	switch op {
	case opRecommend:
		u := fmt.Sprintf("%s/users/%s/recommendations?n=%d", base, url.PathEscape(c.UserPrefix+strconv.Itoa(1+rng.IntN(c.Users))), c.N)
		if c.Model != "" {
			u += "&model=" + url.QueryEscape(c.Model)
		}
		req, _ = http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	case opSimilar:
		u := fmt.Sprintf("%s/items/%s/similar?n=%d", base, url.PathEscape(items[rng.IntN(len(items))]), c.N)
		req, _ = http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	default:
		buf.Reset()
		buf.WriteString(`{"interactions":[`)
		for k := 0; k < c.Batch; k++ {
			if k > 0 {
				buf.WriteByte(',')
			}
			if c.IngestUsers {
				fmt.Fprintf(buf, `{"user_id":"%s%d","item_id":%q,"type":"view"}`, c.UserPrefix, 1+rng.IntN(c.Users), items[rng.IntN(len(items))])
				continue
			}
			// Fresh bench users so ingest does not disturb the measured users.
			fmt.Fprintf(buf, `{"user_id":"bench-%d-%d","item_id":%q,"type":"view"}`, worker, seq%1000, items[rng.IntN(len(items))])
		}
		buf.WriteString(`]}`)
		req, _ = http.NewRequestWithContext(ctx, http.MethodPost, base+"/interactions", bytes.NewReader(slices.Clone(buf.Bytes())))
		req.Header.Set("Content-Type", "application/json")
	}
	setKey(req, c.Key)
	return req
}

func summarise(c benchConfig, results [][]benchSample) *BenchResult {
	res := &BenchResult{Addr: c.Addr, Duration: c.Duration.Seconds(), Concurrency: c.Concurrency, Rate: c.Rate}
	var mixParts []string
	for _, op := range []benchOp{opRecommend, opSimilar, opIngest} {
		if c.Mix[op] > 0 {
			mixParts = append(mixParts, fmt.Sprintf("%s=%d", op, c.Mix[op]))
		}
	}
	res.Mix = strings.Join(mixParts, ",")
	byOp := map[benchOp][]time.Duration{}
	errs := map[benchOp]int{}
	var all []time.Duration
	totalErrs := 0
	for _, rs := range results {
		for _, s := range rs {
			byOp[s.op] = append(byOp[s.op], s.latency)
			all = append(all, s.latency)
			if s.err != "" {
				errs[s.op]++
				totalErrs++
				if len(res.FirstErrors) < 5 {
					res.FirstErrors = append(res.FirstErrors, s.err)
				}
			}
		}
	}
	for _, op := range []benchOp{opRecommend, opSimilar, opIngest} {
		if len(byOp[op]) == 0 {
			continue
		}
		r := latencySummary(string(op), byOp[op], errs[op], c.Duration)
		if op == opIngest {
			r.EventsPerS = float64((r.Requests-r.Errors)*c.Batch) / c.Duration.Seconds()
		}
		res.Ops = append(res.Ops, r)
	}
	res.Total = latencySummary("total", all, totalErrs, c.Duration)
	return res
}

func latencySummary(op string, ls []time.Duration, errs int, d time.Duration) BenchOpResult {
	slices.Sort(ls)
	pct := func(p float64) float64 {
		if len(ls) == 0 {
			return 0
		}
		i := int(p*float64(len(ls))+0.5) - 1
		return float64(ls[max(0, min(i, len(ls)-1))]) / 1e6
	}
	return BenchOpResult{Op: op, Requests: len(ls), Errors: errs, Throughput: float64(len(ls)) / d.Seconds(),
		P50ms: pct(0.5), P90ms: pct(0.9), P99ms: pct(0.99), Maxms: pct(1)}
}

func printBench(w io.Writer, r *BenchResult) {
	fmt.Fprintf(w, "%d clients, %.0fs, mix %s\n", r.Concurrency, r.Duration, r.Mix)
	fmt.Fprintf(w, "%-10s %9s %7s %10s %8s %8s %8s %8s %10s\n", "op", "requests", "errors", "req/s", "p50 ms", "p90 ms", "p99 ms", "max ms", "events/s")
	for _, o := range append(r.Ops, r.Total) {
		ev := ""
		if o.EventsPerS > 0 {
			ev = fmt.Sprintf("%.0f", o.EventsPerS)
		}
		fmt.Fprintf(w, "%-10s %9d %7d %10.0f %8.2f %8.2f %8.2f %8.2f %10s\n", o.Op, o.Requests, o.Errors, o.Throughput, o.P50ms, o.P90ms, o.P99ms, o.Maxms, ev)
	}
	for _, e := range r.FirstErrors {
		fmt.Fprintln(w, "error:", e)
	}
}
