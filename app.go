package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/handlers"
	"github.com/recsys-engine/recsys/jobs"
	"github.com/recsys-engine/recsys/recsys"
	"github.com/recsys-engine/recsys/recsys/online"
	"github.com/recsys-engine/recsys/recsys/serving"
	"github.com/recsys-engine/recsys/storage"
	"github.com/recsys-engine/recsys/storage/backend"
	"github.com/recsys-engine/recsys/storage/postgres"
	"github.com/recsys-engine/recsys/web"
)

// Config is everything serve needs; flags and environment fill it.
type Config struct {
	Addr     string
	DB       string
	AppKey   string
	AdminKey string
	Insecure bool
	Demo     bool
	Policy   api.Policy
	Limits   handlers.Limits
	Logger   *slog.Logger
	// AllowedHosts are the Host names answered besides loopback ones: on a
	// server with no keys on loopback always, elsewhere when given
	// (handlers.Hosts).
	AllowedHosts []string
	// MaxDBSize caps the database file in bytes; 0 is no cap.
	MaxDBSize int64
	// AllowFallback makes /readyz ready before any model is trained.
	AllowFallback bool
	// Jobs configures the retrain triggers and the models they train.
	Jobs jobs.Options
	// Server bounds how long a connection may take; zero fields take
	// DefaultServerTimeouts.
	Server ServerTimeouts
	// PprofAddr, when set, serves net/http/pprof on this loopback address,
	// apart from the API so that profiles never pass its auth or metrics.
	PprofAddr string
	// ContentApproxAbove: content search goes through HNSW above this many
	// items (negative: always exact).
	ContentApproxAbove int
	// ColdSlotsPer10: how many slots in ten of a recommendation list may go
	// to cold items (0 = serving.DefaultColdSlotsPer10, negative = none).
	ColdSlotsPer10 int
	// Online configures recommendation ids, the impression log,
	// attribution and experiments (docs/design.md#online).
	Online OnlineConfig
	// Role is what the process does among replicas (serve --role); the
	// zero value is RoleAll.
	Role Role
}

// OnlineConfig configures recsys/online; zero fields take its defaults.
type OnlineConfig struct {
	Off             bool // no recommendation ids, impressions, attribution or experiments
	Window          time.Duration
	Sample          float64
	Retention       time.Duration // negative: every list is kept
	ConversionTypes []string
}

// ServerTimeouts are the http.Server's connection timeouts. They cut off
// slow clients (slowloris: headers or a body trickled a byte at a time) that
// the per-request timeout cannot, because no handler runs yet.
type ServerTimeouts struct {
	ReadHeader time.Duration // the request line and headers
	Read       time.Duration // the whole request, body included
	Write      time.Duration // from the end of the headers to the end of the answer
	Idle       time.Duration // a kept-alive connection between requests
}

// DefaultServerTimeouts leave a 32 MiB body 30 s to arrive and an answer
// 30 s beyond the default request timeout.
var DefaultServerTimeouts = ServerTimeouts{ReadHeader: 5 * time.Second, Read: 30 * time.Second,
	Write: 40 * time.Second, Idle: 2 * time.Minute}

// withDefaults fills zero fields.
func (t ServerTimeouts) withDefaults() ServerTimeouts {
	d := DefaultServerTimeouts
	if t.ReadHeader == 0 {
		t.ReadHeader = d.ReadHeader
	}
	if t.Read == 0 {
		t.Read = d.Read
	}
	if t.Write == 0 {
		t.Write = d.Write
	}
	if t.Idle == 0 {
		t.Idle = d.Idle
	}
	return t
}

// App is the running service: store, engine and HTTP server. Tests start
// it on 127.0.0.1:0 with a temporary database.
type App struct {
	cfg    Config
	store  backend.Store
	engine *serving.Engine
	sched  *jobs.Scheduler
	online *online.Service // nil when Config.Online.Off
	// deps built the server's handler; the auth tests build variants of
	// it (an exposed address) on the same services.
	deps handlers.Deps
	ln   net.Listener
	srv  *http.Server
	// pprof is the profiling server, nil unless Config.PprofAddr is set.
	pprofLn  net.Listener
	pprofSrv *http.Server
	// stopLoad cancels the start's load of the models after the active
	// one and waits for it; nil until NewApp starts it.
	stopLoad func()
	// closeOnce makes Close safe to repeat: NewApp's cleanup and a
	// caller's deferred Close may both reach it.
	closeOnce sync.Once
	closeErr  error
}

// NewApp opens the store, fills the demo data if asked, and binds the
// listener, so that a bad address or a locked database fails here. Each
// resource goes into the App as soon as it is open, and one deferred Close
// releases them all when a later step fails, so that a failed start leaves
// neither the database locked nor a port bound.
func NewApp(ctx context.Context, c Config) (_ *App, err error) {
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if err := checkAddr(ctx, c.Addr); err != nil {
		return nil, fmt.Errorf("--addr: %w", err)
	}
	if err := checkKeys(c); err != nil {
		return nil, err
	}
	if err := checkExposure(c); err != nil {
		return nil, err
	}
	if err := checkRole(c); err != nil {
		return nil, err
	}
	a := &App{cfg: c}
	defer func() {
		if err != nil {
			a.Close()
		}
	}()
	st, err := openStore(ctx, c.DB, c.Policy, c.MaxDBSize)
	if err != nil {
		return nil, err
	}
	a.store = st
	var warm *storage.Warmup
	if f, ok := st.(interface{ Prefetch() *storage.Warmup }); ok {
		warm = f.Prefetch() // a bbolt file: the serving working set is most of it
	}
	// The port is bound before the demo data is written, so that a busy
	// port fails the start with the database left as it was.
	if a.ln, err = net.Listen("tcp", c.Addr); err != nil {
		return nil, fmt.Errorf("--addr: %w", err)
	}
	if c.Demo {
		if err = fillDemo(ctx, st, c.Logger); err != nil {
			return nil, err
		}
	}
	eng := serving.NewEngine(st, serving.EngineOptions{ContentApproxAbove: c.ContentApproxAbove, ColdSlotsPer10: c.ColdSlotsPer10, Logger: c.Logger})
	// A persisted model that cannot be read (a damaged record) is logged,
	// counted in recsys_model_load_errors and named by /readyz; the service
	// starts anyway on the rest, an older version, or popularity. The
	// active model loads before the server answers (the port is bound
	// earlier, so that a busy port fails the start before any work), the
	// models only asked for by name after it (LoadPersistedAsync); Close
	// stops that load.
	var lateLoadErrs atomic.Int64
	loadCtx, stopLoad := context.WithCancel(context.WithoutCancel(ctx))
	a.stopLoad = func() { stopLoad(); _ = eng.WaitLoaded(context.Background()) }
	loadErrs := eng.LoadPersistedAsync(loadCtx, st, runningArms(ctx, st, c), func(err error) {
		lateLoadErrs.Add(1)
		c.Logger.Error("loading persisted models", "err", err)
	})
	for _, err := range loadErrs {
		c.Logger.Error("loading persisted models", "err", err)
	}
	if err := eng.LoadSteering(ctx, st); err != nil {
		// A rule that no longer compiles is left out; the others serve.
		c.Logger.Error("loading the stored rules and placements", "err", err)
	}
	jo := c.Jobs
	jo.Logger = c.Logger
	jo.Train.ContentApproxAbove = c.ContentApproxAbove
	jobsFinished := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "recsys_jobs_finished_total",
		Help: "Jobs this process ran to an end, by kind (train, evaluate) and state (succeeded, failed, cancelled)."}, []string{"kind", "state"})
	observe := jo.OnProgress
	jo.OnProgress = func(j api.Job) {
		if j.Done() {
			jobsFinished.WithLabelValues(j.Kind, j.State).Inc()
		}
		if observe != nil {
			observe(j)
		}
	}
	_, jo.Replicated = st.(jobs.Shared) // replicas share the queue and elect a trainer
	jo.NeverLead = !c.Role.trains()
	sched := jobs.NewScheduler(st, eng, jo)
	if err = sched.Recover(ctx); err != nil {
		return nil, err
	}
	// A train process is ready without a trained model: it is what
	// trains the first one, and it serves no recommendations.
	ready := readiness(eng, loadErrs, c.AllowFallback || !c.Role.serves(), warm)
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), eng.RankingMetric(), eng.FilterErrorsMetric(),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "recsys_model_load_errors",
			Help: "Persisted models (or the active model) that could not be loaded at start."},
			func() float64 { return float64(int64(len(loadErrs)) + lateLoadErrs.Load()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "recsys_models_loading",
			Help: "Persisted models the start is still loading after the active one; a request naming one is answered 503 model_not_ready."},
			func() float64 { return float64(eng.LoadingCount()) }),
		jobsFinished, roleGauge(c.Role),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "recsys_active_model_trained_timestamp_seconds",
			Help: "When the model answering requests that name none was trained (Unix seconds); 0 while the popularity fallback answers."},
			func() float64 {
				if m := eng.Active(); m != nil {
					return float64(m.Info.TrainedAt.UnixNano()) / 1e9
				}
				return 0
			}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "recsys_training_leader",
			Help: "1 while this process runs the training jobs and triggers (the elected leader among replicas), else 0."},
			func() float64 {
				if sched.Leading() {
					return 1
				}
				return 0
			}))
	if bs, ok := st.(*storage.Store); ok {
		// The bbolt store's event log (PostgreSQL commits each batch itself).
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "recsys_ingest_tail_events",
			Help: "Acknowledged events in the event log not yet applied to the database's indexes (the applier's lag)."},
			func() float64 { return float64(bs.TailEvents()) }),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "recsys_event_log_bytes",
				Help: "Size of the event log (every event ever ingested through it)."},
				func() float64 { return float64(bs.LogBytes()) }),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "recsys_db_bytes",
				Help: "Size of the bbolt database file on disk."},
				func() float64 { return float64(bs.FileBytes()) }),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "recsys_db_free_bytes",
				Help: "Bytes of the database file in free pages, which writes reuse and `recsys compact` (server stopped) removes."},
				func() float64 { return float64(bs.FreeBytes()) }))
		if free, size := bs.FreeBytes(), bs.FileBytes(); free >= 256<<20 && 4*free >= size {
			c.Logger.Info("much of the database file is free pages: stop the server and run recsys compact to shrink it",
				"free_mib", free>>20, "file_mib", size>>20)
		}
	}
	deps := handlers.Deps{
		Interactions: st, Users: st, Items: st, Stats: st, Recommender: eng,
		Jobs: sched, JobRecords: st, Models: st, Reports: st, Backup: st,
		Rules: st, Steering: eng,
		Ready: ready, OpenAPI: openAPISpec, Web: web.FS(), Docs: web.APIDocs(),
		Keys:   handlers.Keys{App: c.AppKey, Admin: c.AdminKey, Exposed: !isLoopback(c.Addr)},
		Hosts:  hostsOf(c),
		Limits: c.Limits,
		Logger: c.Logger, Registry: reg,
		TrainOnly: !c.Role.serves(),
	}
	deps.Version = func(ctx context.Context) (api.VersionOut, error) { return runningVersion(ctx, st), nil }
	if !c.Online.Off {
		a.online = online.New(st, online.Options{Window: c.Online.Window, Sample: c.Online.Sample, Retention: c.Online.Retention,
			ConversionTypes: c.Online.ConversionTypes, Policy: st.Policy(), Logger: c.Logger, Registry: reg,
			Model: func(name string) (known, served bool) {
				return recsys.Recommends(name), eng.Serves(name)
			},
			Loading: eng.Loading,
			ArmWarning: func(name string) string {
				if m := eng.Lookup(name); m != nil {
					return c.Jobs.Budget.Warning(name, m.Info.ServingCost)
				}
				return ""
			}})
		deps.Online = a.online
	}
	h := handlers.New(deps)
	for _, w := range exposureWarnings(c) {
		c.Logger.Warn(w, "addr", a.ln.Addr().String())
	}
	to := c.Server.withDefaults()
	a.srv = &http.Server{
		Handler:           h,
		ReadHeaderTimeout: to.ReadHeader,
		ReadTimeout:       to.Read,
		WriteTimeout:      max(to.Write, c.Limits.RequestTimeout+time.Second),
		IdleTimeout:       to.Idle,
		ErrorLog:          slog.NewLogLogger(c.Logger.Handler(), slog.LevelWarn),
	}
	a.engine, a.sched, a.deps = eng, sched, deps
	if c.PprofAddr != "" {
		if a.pprofLn, err = net.Listen("tcp", c.PprofAddr); err != nil {
			return nil, fmt.Errorf("--pprof: %w", err)
		}
		a.pprofSrv = &http.Server{Handler: pprofMux(), ReadHeaderTimeout: 5 * time.Second}
	}
	return a, nil
}

// pprofMux serves the runtime profiles of net/http/pprof.
func pprofMux() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}

// exposureWarnings are the start-up warnings about what the keys leave
// open or shut (the rule is handlers' authorize).
func exposureWarnings(c Config) []string {
	var out []string
	exposed := !isLoopback(c.Addr)
	switch {
	case c.AppKey == "" && c.AdminKey == "" && !exposed:
		out = append(out, "no API keys set: every route is open; listening on loopback only")
	case c.AppKey == "" && c.AdminKey == "":
		out = append(out, "no API keys set and --insecure: every data route is open to the network")
	}
	if c.AdminKey == "" && (c.AppKey != "" || exposed) {
		out = append(out, "admin routes and item deletes are disabled (they answer 403 admin_disabled): start the server with --admin-key (or RECSYS_ADMIN_KEY) to enable them")
	}
	return out
}

// hostsOf is which Host names the server answers. With no keys on
// loopback every route is open to whatever reaches the port, a web page
// through DNS rebinding included, so the Host must be a loopback name or
// listed. With keys the keys protect the routes, and beyond loopback
// (--insecure) the server cannot know its names: there only a given
// --allowed-hosts restricts it.
func hostsOf(c Config) handlers.Hosts {
	open := c.AppKey == "" && c.AdminKey == "" && isLoopback(c.Addr)
	return handlers.Hosts{Check: open || len(c.AllowedHosts) > 0, Allowed: c.AllowedHosts}
}

// MinKeyBytes is the shortest key serve starts with: 16 random bytes are
// beyond guessing, and a shorter key is a password someone chose.
const MinKeyBytes = 16

// checkKeys refuses keys that do not protect: one too short to resist
// guessing, one that begins or ends with white space (which HTTP strips from
// a header, so that no request could present it), or an admin key equal to
// the application key (which would hand the admin routes to the
// application).
func checkKeys(c Config) error {
	for _, k := range []struct{ flag, env, key string }{
		{"--app-key", "RECSYS_APP_KEY", c.AppKey}, {"--admin-key", "RECSYS_ADMIN_KEY", c.AdminKey},
	} {
		switch {
		case k.key == "":
		case strings.TrimSpace(k.key) != k.key:
			return fmt.Errorf("%s (%s) begins or ends with white space, which no request can send in a header", k.flag, k.env)
		case len(k.key) < MinKeyBytes:
			return fmt.Errorf("%s (%s) is %d bytes; a key must be at least %d bytes (for example: openssl rand -hex 16)", k.flag, k.env, len(k.key), MinKeyBytes)
		}
	}
	if c.AppKey != "" && c.AppKey == c.AdminKey {
		return errors.New("--app-key and --admin-key (RECSYS_APP_KEY, RECSYS_ADMIN_KEY) are the same key: " +
			"the admin key must differ, or every holder of the application key could use the admin routes")
	}
	return nil
}

// checkExposure refuses a non-loopback address without keys.
func checkExposure(c Config) error {
	if c.AppKey != "" || c.AdminKey != "" || c.Insecure {
		return nil
	}
	if isLoopback(c.Addr) {
		return nil
	}
	return fmt.Errorf("refusing to listen on %s with no API keys: set --app-key and --admin-key (or RECSYS_APP_KEY, RECSYS_ADMIN_KEY), or pass --insecure to open the data routes to anyone (the admin routes stay disabled)", c.Addr)
}

// checkAddr tells what is wrong with a listen address before anything
// else reads it, so that a typo is reported as one and not as a missing
// key (a non-loopback address needs keys).
func checkAddr(ctx context.Context, addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q is not HOST:PORT (e.g. 127.0.0.1:8080, or :8080 for every interface): %v", addr, err)
	}
	if _, err := net.LookupPort("tcp", port); err != nil {
		return fmt.Errorf("%q: port %q is not a port number", addr, port)
	}
	if host == "" || net.ParseIP(host) != nil {
		return nil
	}
	if _, err := net.DefaultResolver.LookupHost(ctx, host); err != nil {
		return fmt.Errorf("%q: host %q does not resolve: %v", addr, host, err)
	}
	return nil
}

func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Addr is the bound address (useful with port 0).
func (a *App) Addr() string { return a.ln.Addr().String() }

// Run serves until ctx is done, then shuts down in order: stop accepting
// and finish in-flight requests, then (in Close) the store.
func (a *App) Run(ctx context.Context) error {
	log := a.cfg.Logger
	log.Info("serving", "addr", a.Addr(), "db", postgres.Redact(a.cfg.DB), "role", a.cfg.Role.String())
	jctx, stopJobs := context.WithCancel(context.WithoutCancel(ctx))
	jobsDone := make(chan struct{})
	go func() { defer close(jobsDone); a.sched.Run(jctx) }()
	if a.online != nil {
		// Cancelled after the server's shutdown, it writes the impressions
		// of the last requests before the store closes.
		// The running experiment is read before the first request is
		// answered: a fresh replica must not serve its users outside it.
		a.online.Refresh(jctx)
		onlineDone := make(chan struct{})
		go func() { defer close(onlineDone); a.online.Run(jctx) }()
		defer func() { <-onlineDone }()
	}
	if w, ok := a.store.(sharedStore); ok {
		syncDone := make(chan struct{})
		go func() { defer close(syncDone); a.followReplicas(jctx, w) }()
		defer func() { <-syncDone }()
	}
	errc := make(chan error, 1)
	go func() { errc <- a.srv.Serve(handlers.Listener(a.ln)) }()
	if a.pprofSrv != nil {
		log.Info("serving profiles", "addr", a.pprofLn.Addr().String())
		go func() { _ = a.pprofSrv.Serve(a.pprofLn) }()
		defer a.pprofSrv.Close()
	}
	var serveErr error
	select {
	case serveErr = <-errc:
	case <-ctx.Done():
	}
	log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	shutdownErr := a.srv.Shutdown(sctx)
	stopJobs() // cancel the running job and wait for it to stop
	<-jobsDone
	if serveErr != nil {
		return serveErr
	}
	if shutdownErr != nil {
		return shutdownErr
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// sharedStore is a store that several replicas share (the PostgreSQL
// store): it tells when any of them stores or activates a model, and
// refreshes its versions from the others' writes.
type sharedStore interface {
	Watch(ctx context.Context, heard func(channel, payload string))
	Refresh(ctx context.Context) error
}

// SyncEvery is how often a replica compares its models with the store's,
// besides on every notification: it bounds how late a model trained at
// another replica is served here (docs/design.md#replicas).
const SyncEvery = 3 * time.Second

// RefreshEvery is how often a replica looks for other replicas' writes of
// data, which its catalogue cache then rebuilds for.
const RefreshEvery = time.Second

// followReplicas serves, until ctx is done, the models other replicas
// store and activate and the rules and placements they write (at once on
// a notification, else within SyncEvery),
// cancels the jobs they are asked to cancel if it runs them, and refreshes the store's versions from their writes every RefreshEvery.
func (a *App) followReplicas(ctx context.Context, w sharedStore) {
	kick := make(chan struct{}, 1)
	go w.Watch(ctx, func(channel, payload string) {
		if channel == postgres.JobsChannel {
			if id, ok := strings.CutPrefix(payload, "cancel "); ok {
				a.sched.CancelRunning(id)
			} else if strings.HasPrefix(payload, "queued ") {
				a.sched.Wake()
			}
			return
		}
		select {
		case kick <- struct{}{}:
		default:
		}
	})
	t := time.NewTicker(SyncEvery)
	defer t.Stop()
	r := time.NewTicker(RefreshEvery)
	defer r.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.C:
			if err := w.Refresh(ctx); err != nil && ctx.Err() == nil {
				a.cfg.Logger.Warn("reading other replicas' writes", "err", err)
			}
			continue
		case <-kick:
		case <-t.C:
		}
		if err := a.engine.Sync(ctx, a.store); err != nil && ctx.Err() == nil {
			a.cfg.Logger.Warn("loading the models stored by another replica", "err", err)
		}
		if err := a.engine.LoadSteering(ctx, a.store); err != nil && ctx.Err() == nil {
			a.cfg.Logger.Warn("loading the rules and placements stored by another replica", "err", err)
		}
	}
}

// Close releases what NewApp opened: the listeners (Run's shutdown has
// closed them if it ran) and then the store, whose file lock a restart or
// another command waits for. Run must have returned. Only the first call
// closes; later ones return its result.
func (a *App) Close() error {
	a.closeOnce.Do(func() {
		var errs []error
		for _, ln := range []net.Listener{a.pprofLn, a.ln} {
			if ln == nil {
				continue
			}
			if err := ln.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
				errs = append(errs, err)
			}
		}
		if a.stopLoad != nil {
			a.stopLoad()
		}
		if a.store != nil {
			errs = append(errs, a.store.Close())
		}
		a.closeErr = errors.Join(errs...)
	})
	return a.closeErr
}

// runningArms names the models of the running experiment, which answer
// requests that name no model (online.Service.Assign): a start loads them
// with the active one. None when online measurement is off or the store
// cannot say.
func runningArms(ctx context.Context, st backend.Store, c Config) []string {
	lister, ok := st.(interface {
		Experiments(context.Context) ([]api.Experiment, error)
	})
	if c.Online.Off || !ok {
		return nil
	}
	exps, err := lister.Experiments(ctx)
	if err != nil {
		return nil
	}
	var names []string
	for _, e := range exps {
		if e.Running() {
			for _, a := range e.Arms {
				names = append(names, a.Model)
			}
		}
	}
	return names
}

// The PostgreSQL store is a shared one, and its jobs table the replicas'
// queue (checked here: Run and NewApp find them by type assertions, which
// a renamed or missing method would silently fail).
var (
	_ sharedStore = (*postgres.Store)(nil)
	_ jobs.Shared = (*postgres.Store)(nil)
)

// readiness is /readyz: the store reads, the start's models are loaded
// (serving.Engine.Ready), a trained model answers unless allowFallback,
// and the start's read of the file into memory (warm, nil for none) is
// done. loadErrs are the errors of the start's first loads.
func readiness(eng *serving.Engine, loadErrs []error, allowFallback bool, warm *storage.Warmup) func(context.Context) error {
	return func(ctx context.Context) error {
		if err := eng.Ready(ctx); err != nil {
			var ae *api.Error
			if errors.As(err, &ae) && ae.Code == api.CodeModelNotReady && eng.Active() == nil && len(loadErrs) > 0 {
				// Still loading the others, but the active model failed: say both.
				return &api.Error{Code: ae.Code, RetryAfter: ae.RetryAfter,
					Message: fmt.Sprintf("the persisted active model could not be loaded (%v); %s", errors.Join(loadErrs...), ae.Message)}
			}
			return err
		}
		if eng.Active() == nil && !allowFallback {
			if len(loadErrs) > 0 {
				return api.Errorf(api.CodeModelNotReady, "the persisted models could not be loaded (%v); serving the popularity fallback: POST /admin/retrain, or start with --allow-fallback to report ready", errors.Join(loadErrs...))
			}
			return api.Errorf(api.CodeModelNotReady, "no trained model is loaded yet; POST /admin/retrain, or start with --allow-fallback to report ready while serving popularity")
		}
		// Answered before the file is in memory, a request would read
		// its pages from the disk one at a time (storage.Prefetch).
		if warm != nil {
			if err := warm.Err(); err != nil {
				return api.Errorf(api.CodeUnavailable, "%v", err)
			}
		}
		return nil
	}
}
