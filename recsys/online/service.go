// Package online measures the served recommendations (docs/design.md#online):
// it names every answer, records what was shown in an impression log
// written in batches off the request path, credits the positive events
// that follow to the list position that showed the item, reports CTR and
// conversion per model and day, and runs A/B experiments between models.
//
// Works cited in the comments are listed in docs/references.md.
package online

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/recsys-engine/recsys/api"
)

// Options configure a Service; zero fields take the defaults.
type Options struct {
	// Window is how long after a list a positive event on one of its items
	// without a recommendation_id is credited to it (default 30 min).
	Window time.Duration
	// Sample is the share of lists recorded, 0 < Sample ≤ 1 (default 1).
	Sample float64
	// Retention is how long a recorded list is kept for attribution
	// (default 24 h; negative: every list is kept). Older lists are
	// deleted every PruneEvery, their counts staying in the counters.
	Retention time.Duration
	// PruneEvery is how often lists past Retention are deleted (1 min).
	PruneEvery time.Duration
	// ConversionTypes are the event types that count as conversions
	// (default purchase).
	ConversionTypes []string
	// FlushEvery is how often the impression log is written (200 ms).
	FlushEvery time.Duration
	// MaxPending bounds the impressions waiting for a write (65,536); a
	// list beyond it is dropped and counted, never waited for.
	MaxPending int
	// Model says whether a model name is a recommender and whether it can
	// serve now (for the arms of an experiment).
	Model func(name string) (known, served bool)
	// Loading, when set, says whether a model not served yet is one the
	// server's start is still loading (an arm then waits for it).
	Loading func(name string) bool
	// ArmWarning, when set, returns a warning for an arm's model ("" for
	// none): the server warns of an arm over the serving budget, which
	// the experiment's users are served by all the same.
	ArmWarning func(model string) string
	Policy     api.Policy
	Now        func() time.Time
	Logger     *slog.Logger
	Registry   *prometheus.Registry // nil: no metrics
}

// Defaults.
const (
	DefaultWindow     = 30 * time.Minute
	DefaultRetention  = 24 * time.Hour
	DefaultPruneEvery = time.Minute
	DefaultFlushEvery = 200 * time.Millisecond
	DefaultMaxPending = 1 << 16
	DefaultAlpha      = 0.05
	DefaultMinImpr    = 1000
)

// Service implements api.OnlineService over an api.OnlineStore.
type Service struct {
	st   api.OnlineStore
	opts Options
	conv map[string]bool

	idPrefix string
	seq      atomic.Uint64

	running atomic.Pointer[api.Experiment] // nil: none

	flushMu sync.Mutex // one write of the log at a time
	mu      sync.Mutex
	pending []api.Impression
	users   map[string]int // users with impressions pending or being written
	kick    chan struct{}

	m *metrics
}

// New returns a Service; Run writes its impression log.
func New(st api.OnlineStore, o Options) *Service {
	if o.Window <= 0 {
		o.Window = DefaultWindow
	}
	if o.Sample <= 0 || o.Sample > 1 {
		o.Sample = 1
	}
	if o.Retention == 0 {
		o.Retention = DefaultRetention
	}
	if o.PruneEvery <= 0 {
		o.PruneEvery = DefaultPruneEvery
	}
	if o.ConversionTypes == nil {
		o.ConversionTypes = []string{"purchase"}
	}
	if o.FlushEvery <= 0 {
		o.FlushEvery = DefaultFlushEvery
	}
	if o.MaxPending <= 0 {
		o.MaxPending = DefaultMaxPending
	}
	if o.Policy.Types == nil {
		o.Policy = api.DefaultPolicy()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Model == nil {
		o.Model = func(string) (bool, bool) { return true, true }
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	s := &Service{st: st, opts: o, conv: map[string]bool{}, idPrefix: hex.EncodeToString(b) + "-",
		users: map[string]int{}, kick: make(chan struct{}, 1), m: newMetrics(o.Registry)}
	for _, t := range o.ConversionTypes {
		s.conv[t] = true
	}
	return s
}

// Run writes the impression log every FlushEvery (or when a batch fills),
// follows the running experiment and deletes the lists past Retention
// every PruneEvery, until ctx ends; then it writes what is left. Call
// Refresh before serving so that the first requests see the running
// experiment; Run reads it again every 2 s after that.
func (s *Service) Run(ctx context.Context) {
	tick := time.NewTicker(s.opts.FlushEvery)
	defer tick.Stop()
	refresh := time.Now()
	if s.opts.Retention > 0 {
		prune := time.NewTicker(s.opts.PruneEvery)
		defer prune.Stop()
		var wg sync.WaitGroup
		defer wg.Wait() // the store may be closed once Run returns
		wg.Go(func() {
			for {
				select {
				case <-ctx.Done():
					return
				case <-prune.C:
				}
				if err := s.Prune(ctx); err != nil && ctx.Err() == nil {
					s.opts.Logger.Error("pruning the impression log", "err", err)
				}
			}
		})
	}
	for {
		select {
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			if err := s.Flush(fctx); err != nil {
				s.opts.Logger.Error("writing the impression log at shutdown", "err", err)
			}
			cancel()
			return
		case <-tick.C:
		case <-s.kick:
		}
		if err := s.Flush(ctx); err != nil && ctx.Err() == nil {
			s.opts.Logger.Error("writing the impression log", "err", err)
		}
		// Another replica may start or stop an experiment.
		if time.Since(refresh) > 2*time.Second {
			s.Refresh(ctx)
			refresh = time.Now()
		}
	}
}

// pruneBatch is the most lists Prune deletes in one transaction, so that
// a backlog does not hold the store's writer for long.
const pruneBatch = 1_000

// Prune deletes the lists recorded longer than Retention ago, and their
// credits, pruneBatch at a time; a touch naming one is no longer credited.
// After each transaction it waits as long as that took, leaving the
// store's writer and a core to the requests at least half the time.
func (s *Service) Prune(ctx context.Context) error {
	if s.opts.Retention <= 0 {
		return nil
	}
	before := s.opts.Now().Add(-s.opts.Retention)
	for {
		start := time.Now()
		n, err := s.st.PruneImpressions(ctx, before, pruneBatch)
		s.m.pruned(n)
		if err != nil || n < pruneBatch {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Since(start)):
		}
	}
}

// Refresh reloads the running experiment from the store.
func (s *Service) Refresh(ctx context.Context) {
	exps, err := s.st.Experiments(ctx)
	if err != nil {
		if ctx.Err() == nil {
			s.opts.Logger.Warn("reading the experiments", "err", err)
		}
		return
	}
	for _, e := range exps {
		if e.Running() {
			s.running.Store(&e)
			return
		}
	}
	s.running.Store(nil)
}

// Flush writes the pending impressions. A failed write keeps them pending.
func (s *Service) Flush(ctx context.Context) error {
	s.flushMu.Lock()
	defer s.flushMu.Unlock()
	s.mu.Lock()
	batch := s.pending
	s.pending = nil
	s.mu.Unlock()
	if len(batch) == 0 {
		return nil
	}
	if err := s.st.PutImpressions(ctx, batch); err != nil {
		s.mu.Lock()
		if len(s.pending)+len(batch) <= s.opts.MaxPending {
			s.pending = append(batch, s.pending...)
		} else {
			s.m.dropped(len(batch))
			s.forget(batch)
		}
		s.mu.Unlock()
		return err
	}
	s.mu.Lock()
	s.forget(batch)
	s.mu.Unlock()
	for _, imp := range batch {
		s.m.shown(imp.Model, len(imp.Items))
	}
	return nil
}

// forget drops the users of written (or dropped) impressions; s.mu held.
func (s *Service) forget(batch []api.Impression) {
	for _, imp := range batch {
		if s.users[imp.UserID]--; s.users[imp.UserID] <= 0 {
			delete(s.users, imp.UserID)
		}
	}
}

// Assign puts a request that names no model into the running experiment's
// arm of its user: FNV-1a of (experiment id, user id) mod 10,000 against the
// arms' cumulative shares, so a user stays in one arm for the experiment's
// life and experiments split users independently.
func (s *Service) Assign(_ context.Context, req *api.RecommendRequest) api.Assignment {
	e := s.running.Load()
	if e == nil || req.Model != "" {
		return api.Assignment{}
	}
	arm := ArmOf(e.ID, req.UserID, e.Arms)
	req.Model = e.Arms[arm].Model
	return api.Assignment{Experiment: e.ID, Arm: e.Arms[arm].Model}
}

// ArmOf is the index of the arm user falls in.
func ArmOf(experiment, user string, arms []api.Arm) int {
	h := fnv.New64a()
	h.Write([]byte(experiment))
	h.Write([]byte{0})
	h.Write([]byte(user))
	b := int(h.Sum64() % 10000)
	acc := 0
	for k, a := range arms {
		if acc += a.Share * 100; b < acc {
			return k
		}
	}
	return len(arms) - 1
}

// Shown names an answer and queues it for the impression log when it is
// sampled. It never waits: a full queue drops the list and counts it.
func (s *Service) Shown(req api.RecommendRequest, rec *api.Recommendations, a api.Assignment) string {
	at := s.opts.Now().UTC()
	id := api.NewRecommendationID(at, s.idPrefix, s.seq.Add(1))
	if len(rec.Items) == 0 || !s.sampled(id) {
		return id
	}
	imp := api.Impression{ID: id, UserID: rec.UserID, Model: rec.Model, ModelVersion: rec.ModelVersion,
		Experiment: a.Experiment, Arm: a.Arm, Items: make([]string, len(rec.Items)), At: at, Placement: req.Steer.Placement}
	for k, it := range rec.Items {
		imp.Items[k] = it.ItemID
	}
	s.mu.Lock()
	if len(s.pending) >= s.opts.MaxPending {
		s.mu.Unlock()
		s.m.dropped(1)
		return id
	}
	s.pending = append(s.pending, imp)
	s.users[imp.UserID]++
	full := len(s.pending) >= 4096
	s.mu.Unlock()
	if full {
		select {
		case s.kick <- struct{}{}:
		default:
		}
	}
	return id
}

// sampled decides by the id's hash whether a list is recorded.
func (s *Service) sampled(id string) bool {
	if s.opts.Sample >= 1 {
		return true
	}
	h := fnv.New64a()
	h.Write([]byte(id))
	return float64(h.Sum64()%1_000_000) < s.opts.Sample*1_000_000
}

// Attribute credits the positive events of an acknowledged batch (the
// policy's verdict, api/policy.go). Impressions of the batch's users that
// are still queued are written first, so that a click never waits on, or
// outruns, the list it came from.
func (s *Service) Attribute(ctx context.Context, evs []api.Interaction, recIDs []string) (int, error) {
	now := s.opts.Now().UTC()
	var touches []api.Touch
	wait := false
	s.mu.Lock()
	for k, ev := range evs {
		pos, _, err := s.opts.Policy.Judge(ev)
		if err != nil || !pos {
			continue
		}
		touches = append(touches, api.Touch{RecommendationID: recIDs[k], UserID: ev.UserID, ItemID: ev.ItemID,
			At: now, Conversion: s.conv[ev.Type]})
		// An id may name an anonymous history's list (no user).
		wait = wait || s.users[ev.UserID] > 0 || recIDs[k] != "" && s.users[""] > 0
	}
	s.mu.Unlock()
	if len(touches) == 0 {
		return 0, nil
	}
	if wait {
		if err := s.Flush(ctx); err != nil {
			return 0, err
		}
	}
	got, err := s.st.Attribute(ctx, touches, s.opts.Window)
	if err != nil {
		s.m.attributionErrors.Inc()
		return 0, err
	}
	for _, a := range got {
		s.m.credited(a)
	}
	return len(got), nil
}

// Report is GET /admin/online: per model and day, per model over the days
// from..to (YYYY-MM-DD; default the last 7 days), and per placement over
// them.
func (s *Service) Report(ctx context.Context, from, to, model string) (api.OnlineReportOut, error) {
	lo, hi, err := dayRange(from, to, s.opts.Now())
	if err != nil {
		return api.OnlineReportOut{}, err
	}
	if model != "" {
		if known, _ := s.opts.Model(model); !known {
			return api.OnlineReportOut{}, api.FieldError("model", fmt.Sprintf("unknown model %q", model))
		}
	}
	if err := s.Flush(ctx); err != nil { // count the lists answered so far
		return api.OnlineReportOut{}, err
	}
	counts, err := s.st.OnlineCounts(ctx, lo, hi)
	if err != nil {
		return api.OnlineReportOut{}, err
	}
	out := api.OnlineReportOut{From: lo, To: hi, Days: []api.OnlineRow{}, Totals: []api.OnlineRow{}, Placements: []api.PlacementRow{}}
	totals, places := map[string]*api.OnlineRow{}, map[string]*api.PlacementRow{}
	for _, c := range counts {
		if model != "" && c.Model != model {
			continue
		}
		if n := len(out.Days); n == 0 || out.Days[n-1].Day != c.Day || out.Days[n-1].Model != c.Model {
			out.Days = append(out.Days, api.OnlineRow{Model: c.Model, Day: c.Day})
		}
		out.Days[len(out.Days)-1].Add(c)
		t := totals[c.Model]
		if t == nil {
			t = &api.OnlineRow{Model: c.Model}
			totals[c.Model] = t
		}
		t.Add(c)
		p := places[c.Placement]
		if p == nil {
			p = &api.PlacementRow{Placement: c.Placement}
			places[c.Placement] = p
		}
		p.Add(c)
	}
	for k := range out.Days {
		withRates(&out.Days[k].Tally)
	}
	for _, name := range slices.Sorted(maps.Keys(totals)) {
		withRates(&totals[name].Tally)
		out.Totals = append(out.Totals, *totals[name])
	}
	for _, name := range slices.Sorted(maps.Keys(places)) {
		withRates(&places[name].Tally)
		out.Placements = append(out.Placements, *places[name])
	}
	return out, nil
}

func withRates(r *api.Tally) {
	r.CTR, r.Conversion = Wilson(r.Clicks, r.Impressions), Wilson(r.Conversions, r.Impressions)
}

// maxDays bounds the range of one report.
const maxDays = 366

// dayRange validates from..to (YYYY-MM-DD, UTC): to defaults to today,
// from to six days before to.
func dayRange(from, to string, now time.Time) (string, string, error) {
	hi := now.UTC().Truncate(24 * time.Hour)
	if to != "" {
		t, err := time.Parse(time.DateOnly, to)
		if err != nil {
			return "", "", api.FieldError("to", "must be a date YYYY-MM-DD")
		}
		hi = t
	}
	lo := hi.AddDate(0, 0, -6)
	if from != "" {
		t, err := time.Parse(time.DateOnly, from)
		if err != nil {
			return "", "", api.FieldError("from", "must be a date YYYY-MM-DD")
		}
		lo = t
	}
	switch {
	case lo.After(hi):
		return "", "", api.FieldError("from", "must not be after to")
	case hi.Sub(lo) >= maxDays*24*time.Hour:
		return "", "", api.FieldError("from", fmt.Sprintf("the range may span at most %d days", maxDays))
	}
	return lo.Format(time.DateOnly), hi.Format(time.DateOnly), nil
}
