package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/recsys-engine/recsys/api/client"
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
	// ItemIDs, when set, are the items of similar-items and ingest
	// requests, drawn uniformly, instead of the first 10,000 the server
	// lists (a wide catalogue's other items would never be asked).
	ItemIDs []string
	N       int
	Model   string
	// SimilarBy is the by= of each similar-items request (collaborative,
	// content or hybrid; "": the server's default).
	SimilarBy string
	// Steering is the filter and placement of each ranked request.
	Steering client.SteeringOptions
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
	// UserIDs, when set, are the users recommendations are asked for,
	// drawn uniformly; otherwise UserPrefix1..UserPrefixUsers.
	UserIDs []string
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
	P999ms     float64 `json:"p999_ms"`
	Maxms      float64 `json:"max_ms"`
}

// BenchResult is the output of `recsys bench --json`.
type BenchResult struct {
	Addr        string  `json:"addr"`
	Duration    float64 `json:"duration_seconds"`
	Concurrency int     `json:"concurrency"`
	Mix         string  `json:"mix"`
	Rate        float64 `json:"target_rate,omitempty"`
	// Span is the seconds the requests' rate counts over: the duration,
	// or longer when paced clients that fell behind sent their last
	// scheduled requests after the end.
	Span float64 `json:"span_seconds"`
	// Unsent counts paced requests scheduled in the run that the clients
	// could not send within the drain allowance after its end.
	Unsent      int             `json:"unsent,omitempty"`
	Ops         []BenchOpResult `json:"ops"`
	Total       BenchOpResult   `json:"total"`
	FirstErrors []string        `json:"first_errors,omitempty"`
}

// benchItems reads up to 10,000 item ids for similar-item and ingest
// requests.
func benchItems(ctx context.Context, cl *client.Client) ([]string, error) {
	var ids []string
	p := client.Page{Limit: 1000}
	for len(ids) < 10000 {
		page, err := cl.Items(ctx, p)
		if err != nil {
			return nil, fmt.Errorf("GET /items: %w", err)
		}
		for _, it := range page.Items {
			ids = append(ids, it.ID)
		}
		if page.NextCursor == "" {
			break
		}
		p.Cursor = page.NextCursor
	}
	if len(ids) == 0 {
		return nil, errors.New("the server has no items; import data first")
	}
	return ids, nil
}

type benchSample struct {
	op      benchOp
	latency time.Duration
	err     string
}

// benchDrain bounds how long a paced client that fell behind goes on
// sending the requests scheduled before the end of the run; the ones it
// cannot send by then are counted as unsent.
const benchDrain = 10 * time.Second

// paceSchedule is when client w of c sends its request seq when the
// clients are paced to rate requests/s in all: start + (w/c + seq)·c/rate,
// so the C clients' sends interleave evenly.
func paceSchedule(start time.Time, rate float64, c, w, seq int) time.Time {
	interval := float64(c) / rate * float64(time.Second)
	return start.Add(time.Duration(interval*float64(seq) + interval*float64(w)/float64(c)))
}

// benchClient is what one client of a run measured.
type benchClient struct {
	samples []benchSample
	unsent  int       // paced requests scheduled in the run but never sent
	last    time.Time // when its last measured answer arrived
}

func bench(ctx context.Context, c benchConfig, log io.Writer) (*BenchResult, error) {
	base := "http://" + c.Addr
	transport := &http.Transport{MaxIdleConns: c.Concurrency * 2, MaxIdleConnsPerHost: c.Concurrency * 2, IdleConnTimeout: time.Minute}
	cl := client.New(base, client.WithKey(c.Key), client.WithHTTPClient(&http.Client{Transport: transport, Timeout: 30 * time.Second}))
	defer transport.CloseIdleConnections()
	var items []string
	if len(c.ItemIDs) > 0 {
		items = c.ItemIDs
	} else if c.Mix[opSimilar] > 0 || c.Mix[opIngest] > 0 {
		var err error
		if items, err = benchItems(ctx, cl); err != nil {
			return nil, err
		}
	}
	var ops []benchOp
	for _, op := range []benchOp{opRecommend, opSimilar, opIngest} {
		for k := 0; k < c.Mix[op]; k++ {
			ops = append(ops, op)
		}
	}
	users := len(c.UserIDs)
	if users == 0 {
		users = c.Users
	}
	pace := ""
	if c.Rate > 0 {
		pace = fmt.Sprintf(", paced to %.0f req/s", c.Rate)
	}
	fmt.Fprintf(log, "bench: %d clients against %s for %v (+%v warm-up)%s, %d users, %d items\n", c.Concurrency, c.Addr, c.Duration, c.Warmup, pace, users, len(items))
	start := time.Now()
	measureFrom := start.Add(c.Warmup)
	end := measureFrom.Add(c.Duration)
	clients := make([]benchClient, c.Concurrency)
	var wg sync.WaitGroup
	for w := 0; w < c.Concurrency; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			bc := &clients[w]
			rng := rand.New(rand.NewPCG(c.Seed, uint64(w)))
			var buf bytes.Buffer
			for seq := 0; ctx.Err() == nil; seq++ {
				// t0 is when the request counts from: its scheduled time
				// when paced, so that a late send is charged to the server
				// that made the client late (no coordinated omission).
				var t0 time.Time
				if c.Rate > 0 {
					t0 = paceSchedule(start, c.Rate, c.Concurrency, w, seq)
					if !t0.Before(end) {
						return
					}
					if time.Since(end) > benchDrain {
						for ; t0.Before(end); seq++ {
							if !t0.Before(measureFrom) {
								bc.unsent++
							}
							t0 = paceSchedule(start, c.Rate, c.Concurrency, w, seq+1)
						}
						return
					}
					if wait := time.Until(t0); wait > 0 {
						time.Sleep(wait)
					}
				} else if t0 = time.Now(); !t0.Before(end) {
					return
				}
				op := ops[rng.IntN(len(ops))]
				s := benchSample{op: op}
				if err := benchCall(ctx, cl, c, op, items, rng, &buf, w, seq); err != nil {
					var ce *client.Error
					if errors.As(err, &ce) {
						s.err = fmt.Sprintf("%s: status %d %s", op, ce.Status, ce.Code)
					} else {
						s.err = err.Error()
					}
				}
				done := time.Now()
				s.latency = done.Sub(t0)
				if !t0.Before(measureFrom) {
					bc.samples = append(bc.samples, s)
					bc.last = done
				}
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return summarise(c, clients, measureFrom), nil
}

// benchCall sends one request of kind op through the client.
func benchCall(ctx context.Context, cl *client.Client, c benchConfig, op benchOp, items []string, rng *rand.Rand, buf *bytes.Buffer, worker, seq int) error {
	switch op {
	case opRecommend:
		user := ""
		if len(c.UserIDs) > 0 {
			user = c.UserIDs[rng.IntN(len(c.UserIDs))]
		} else {
			user = c.UserPrefix + strconv.Itoa(1+rng.IntN(c.Users))
		}
		// Send drops the answers undecoded: decoding them cost the load
		// generator, on the server's cores, 18% of the measured rate.
		return cl.Send(ctx, client.RecommendCall(user, client.RecommendOptions{N: c.N, Model: c.Model, Steering: c.Steering}))
	case opSimilar:
		return cl.Send(ctx, client.SimilarCall(items[rng.IntN(len(items))], client.SimilarOptions{N: c.N, By: c.SimilarBy, Steering: c.Steering}))
	}
	// The batch is written by hand: encoding/json would cost the load
	// generator, which shares the machine with the server, more CPU.
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
	// A copy: the transport may still read the body after the answer
	// came (a server that answers before reading it all).
	_, err := cl.AddInteractionsJSON(ctx, slices.Clone(buf.Bytes()))
	return err
}

func summarise(c benchConfig, clients []benchClient, measureFrom time.Time) *BenchResult {
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
	// The achieved rate counts over the run, or until the last answer when
	// a paced run drained late.
	span := c.Duration
	for _, bc := range clients {
		res.Unsent += bc.unsent
		if !bc.last.IsZero() {
			span = max(span, bc.last.Sub(measureFrom))
		}
		for _, s := range bc.samples {
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
	res.Span = span.Seconds()
	for _, op := range []benchOp{opRecommend, opSimilar, opIngest} {
		if len(byOp[op]) == 0 {
			continue
		}
		r := latencySummary(string(op), byOp[op], errs[op], span)
		if op == opIngest {
			r.EventsPerS = float64((r.Requests-r.Errors)*c.Batch) / span.Seconds()
		}
		res.Ops = append(res.Ops, r)
	}
	res.Total = latencySummary("total", all, totalErrs, span)
	return res
}

// latencySummary sorts ls and gives its percentiles (nearest rank) and
// the rate of requests over d.
func latencySummary(op string, ls []time.Duration, errs int, d time.Duration) BenchOpResult {
	slices.Sort(ls)
	pct := func(p float64) float64 {
		if len(ls) == 0 {
			return 0
		}
		i := int(math.Ceil(p*float64(len(ls)))) - 1
		return float64(ls[max(0, min(i, len(ls)-1))]) / 1e6
	}
	return BenchOpResult{Op: op, Requests: len(ls), Errors: errs, Throughput: float64(len(ls)) / d.Seconds(),
		P50ms: pct(0.5), P90ms: pct(0.9), P99ms: pct(0.99), P999ms: pct(0.999), Maxms: pct(1)}
}

func printBench(w io.Writer, r *BenchResult) {
	pace := "as fast as they can"
	if r.Rate > 0 {
		pace = fmt.Sprintf("paced to %.0f req/s in all, latency from the scheduled send time", r.Rate)
	}
	fmt.Fprintf(w, "%d clients %s, %.0fs, mix %s\n", r.Concurrency, pace, r.Duration, r.Mix)
	if r.Span > r.Duration+0.05 {
		fmt.Fprintf(w, "the last answers came %.1fs after the end: rates are over %.1fs\n", r.Span-r.Duration, r.Span)
	}
	if r.Unsent > 0 {
		fmt.Fprintf(w, "unsent: %d scheduled requests could not be sent within %v of the end\n", r.Unsent, benchDrain)
	}
	fmt.Fprintf(w, "%-10s %9s %7s %10s %8s %8s %8s %8s %8s %10s\n", "op", "requests", "errors", "req/s", "p50 ms", "p90 ms", "p99 ms", "p99.9 ms", "max ms", "events/s")
	for _, o := range append(r.Ops, r.Total) {
		ev := ""
		if o.EventsPerS > 0 {
			ev = fmt.Sprintf("%.0f", o.EventsPerS)
		}
		fmt.Fprintf(w, "%-10s %9d %7d %10.0f %8.2f %8.2f %8.2f %8.2f %8.2f %10s\n", o.Op, o.Requests, o.Errors, o.Throughput, o.P50ms, o.P90ms, o.P99ms, o.P999ms, o.Maxms, ev)
	}
	for _, e := range r.FirstErrors {
		fmt.Fprintln(w, "error:", e)
	}
}
