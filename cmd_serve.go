package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"recsys/api"
	"recsys/handlers"
	"recsys/jobs"
	"recsys/recsys/serving"
	"recsys/retrieval"
	"recsys/storage"
	"recsys/web"
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

func parseServeFlags(args []string, stderr io.Writer) (Config, error) {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c Config
	var types string
	var err error
	fs.StringVar(&c.Addr, "addr", envOr("RECSYS_ADDR", "127.0.0.1:8080"), "listen address (env RECSYS_ADDR)")
	fs.StringVar(&c.DB, "db", envOr("RECSYS_DB", "./recsys.db"), "bbolt database file (env RECSYS_DB)")
	fs.StringVar(&c.AppKey, "app-key", envOr("RECSYS_APP_KEY", ""), "application key guarding data routes (env RECSYS_APP_KEY)")
	fs.StringVar(&c.AdminKey, "admin-key", envOr("RECSYS_ADMIN_KEY", ""), "admin key guarding /admin/* and deletes (env RECSYS_ADMIN_KEY)")
	fs.BoolVar(&c.Insecure, "insecure", envOr("RECSYS_INSECURE", "") == "1", "allow a non-loopback address with no keys (env RECSYS_INSECURE=1)")
	fs.BoolVar(&c.Demo, "demo", false, "fill an empty database with a generated demo catalogue")
	fs.StringVar(&types, "event-types", envOr("RECSYS_EVENT_TYPES", api.DefaultPolicySpec), "accepted event types: name, name>=min, !negative (env RECSYS_EVENT_TYPES)")
	fs.Int64Var(&c.Limits.MaxBodyBytes, "max-body", envInt("RECSYS_MAX_BODY", handlers.DefaultLimits.MaxBodyBytes), "largest request body in bytes (env RECSYS_MAX_BODY)")
	fs.IntVar(&c.Limits.MaxBatch, "max-batch", int(envInt("RECSYS_MAX_BATCH", int64(handlers.DefaultLimits.MaxBatch))), "largest batch of events or items (env RECSYS_MAX_BATCH)")
	fs.IntVar(&c.Limits.MaxN, "max-n", int(envInt("RECSYS_MAX_N", int64(handlers.DefaultLimits.MaxN))), "largest n for recommendations (env RECSYS_MAX_N)")
	fs.DurationVar(&c.Limits.RequestTimeout, "request-timeout", envDuration("RECSYS_REQUEST_TIMEOUT", handlers.DefaultLimits.RequestTimeout), "per-request timeout (env RECSYS_REQUEST_TIMEOUT)")
	fs.Int64Var(&c.MaxDBSize, "max-db-size", envInt("RECSYS_MAX_DB_SIZE", 0), "largest database file in bytes; writes beyond it get 507 (0: no limit; env RECSYS_MAX_DB_SIZE)")
	fs.DurationVar(&c.Server.ReadHeader, "read-header-timeout", envDuration("RECSYS_READ_HEADER_TIMEOUT", DefaultServerTimeouts.ReadHeader), "time allowed to read a request's headers (env RECSYS_READ_HEADER_TIMEOUT)")
	fs.DurationVar(&c.Server.Read, "read-timeout", envDuration("RECSYS_READ_TIMEOUT", DefaultServerTimeouts.Read), "time allowed to read a whole request, body included (env RECSYS_READ_TIMEOUT)")
	fs.DurationVar(&c.Server.Write, "write-timeout", envDuration("RECSYS_WRITE_TIMEOUT", DefaultServerTimeouts.Write), "time allowed to write an answer; must exceed --request-timeout (env RECSYS_WRITE_TIMEOUT)")
	fs.DurationVar(&c.Server.Idle, "idle-timeout", envDuration("RECSYS_IDLE_TIMEOUT", DefaultServerTimeouts.Idle), "how long an idle kept-alive connection stays open (env RECSYS_IDLE_TIMEOUT)")
	fs.BoolVar(&c.AllowFallback, "allow-fallback", envOr("RECSYS_ALLOW_FALLBACK", "") == "1", "report ready before a model is trained, serving popularity (env RECSYS_ALLOW_FALLBACK=1)")
	fs.DurationVar(&c.Jobs.Interval, "retrain-interval", envDuration("RECSYS_RETRAIN_INTERVAL", jobs.DefaultInterval), "retrain on this schedule; 0 turns it off (env RECSYS_RETRAIN_INTERVAL)")
	fs.Int64Var(&c.Jobs.NewEvents, "retrain-after", envInt("RECSYS_RETRAIN_AFTER", jobs.DefaultNewEvents), "retrain after this many new events; 0 turns it off (env RECSYS_RETRAIN_AFTER)")
	fs.StringVar(&c.PprofAddr, "pprof", envOr("RECSYS_PPROF", ""), "serve net/http/pprof on this loopback address, e.g. 127.0.0.1:6060 (env RECSYS_PPROF)")
	fs.IntVar(&c.ContentApproxAbove, "content-approx-above", int(envInt("RECSYS_CONTENT_APPROX_ABOVE", retrieval.DefaultApproxAbove)), "content search uses an approximate (HNSW) index above this many items; 0 = the default, -1 = always exact (env RECSYS_CONTENT_APPROX_ABOVE)")
	fs.IntVar(&c.ColdSlotsPer10, "cold-slots-per-10", int(envInt("RECSYS_COLD_SLOTS_PER_10", serving.DefaultColdSlotsPer10)), "how many slots in ten of a recommendation list may go to cold items (no events yet) that earn them on content; 0 turns cold slots off (env RECSYS_COLD_SLOTS_PER_10)")
	models := fs.String("models", envOr("RECSYS_MODELS", strings.Join(jobs.DefaultModels, ",")), "models that retraining fits (env RECSYS_MODELS)")
	fs.BoolVar(&c.Jobs.Auto, "auto", envOr("RECSYS_AUTO", "") == "1", "retrain triggers activate the model with the best validation ADG (env RECSYS_AUTO=1)")
	if err := parseFlags(fs, args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("serve takes no arguments, got %q", fs.Args())
	}
	if c.Jobs.Models, err = parseModels(*models); err != nil {
		return c, err
	}
	p, err := api.ParsePolicy(types)
	if err != nil {
		return c, fmt.Errorf("--event-types: %w", err)
	}
	c.Policy = p
	if c.Limits.MaxBatch < 1 || c.Limits.MaxBatch > api.MaxBatch {
		return c, fmt.Errorf("--max-batch must be between 1 and %d", api.MaxBatch)
	}
	if c.PprofAddr != "" {
		if err := checkAddr(context.Background(), c.PprofAddr); err != nil {
			return c, fmt.Errorf("--pprof: %w", err)
		}
	}
	if c.PprofAddr != "" && !isLoopback(c.PprofAddr) {
		return c, fmt.Errorf("--pprof %s: profiles are served on a loopback address only", c.PprofAddr)
	}
	if c.Limits.MaxN < 1 || c.Limits.MaxBodyBytes < 1024 || c.Limits.RequestTimeout <= 0 {
		return c, errors.New("--max-n, --max-body (≥ 1024) and --request-timeout must be positive")
	}
	if c.ColdSlotsPer10 < 0 || c.ColdSlotsPer10 > 10 {
		return c, errors.New("--cold-slots-per-10 must be between 0 (no cold slots) and 10")
	}
	if c.ColdSlotsPer10 == 0 {
		c.ColdSlotsPer10 = -1 // Config's zero value is the default
	}
	if c.MaxDBSize < 0 {
		return c, errors.New("--max-db-size must be 0 (no limit) or a positive number of bytes")
	}
	if c.Server.ReadHeader <= 0 || c.Server.Read <= 0 || c.Server.Write <= 0 || c.Server.Idle <= 0 {
		return c, errors.New("--read-header-timeout, --read-timeout, --write-timeout and --idle-timeout must be positive")
	}
	if c.Server.Write <= c.Limits.RequestTimeout {
		return c, fmt.Errorf("--write-timeout (%v) must exceed --request-timeout (%v), or a slow answer is cut off without its error", c.Server.Write, c.Limits.RequestTimeout)
	}
	c.Logger = slog.New(slog.NewTextHandler(stderr, nil))
	return c, nil
}

func envInt(key string, def int64) int64 {
	if v, err := strconv.ParseInt(envOr(key, ""), 10, 64); err == nil {
		return v
	}
	return def
}

func envDuration(key string, def time.Duration) time.Duration {
	if v, err := time.ParseDuration(envOr(key, "")); err == nil {
		return v
	}
	return def
}

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c, err := parseServeFlags(args, stderr)
	if err != nil {
		return err
	}
	app, err := NewApp(ctx, c)
	if err != nil {
		return err
	}
	defer app.Close()
	return app.Run(ctx)
}

// App is the running service: store, engine and HTTP server. Tests start
// it on 127.0.0.1:0 with a temporary database.
type App struct {
	cfg    Config
	store  *storage.Store
	engine *serving.Engine
	sched  *jobs.Scheduler
	// deps built the server's handler; the auth tests build variants of
	// it (an exposed address) on the same services.
	deps handlers.Deps
	ln   net.Listener
	srv  *http.Server
	// pprof is the profiling server, nil unless Config.PprofAddr is set.
	pprofLn  net.Listener
	pprofSrv *http.Server
}

// NewApp opens the store, fills the demo data if asked, and binds the
// listener, so that a bad address or a locked database fails here.
func NewApp(ctx context.Context, c Config) (*App, error) {
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if err := checkAddr(ctx, c.Addr); err != nil {
		return nil, fmt.Errorf("--addr: %w", err)
	}
	if err := checkExposure(c); err != nil {
		return nil, err
	}
	st, err := storage.Open(c.DB, storage.Options{Policy: c.Policy, MaxSize: c.MaxDBSize})
	if err != nil {
		return nil, err
	}
	if c.Demo {
		if err := fillDemo(ctx, st, c.Logger); err != nil {
			st.Close()
			return nil, err
		}
	}
	eng := serving.NewEngine(st, serving.EngineOptions{ContentApproxAbove: c.ContentApproxAbove, ColdSlotsPer10: c.ColdSlotsPer10})
	// A persisted model that cannot be read (a damaged record) is logged,
	// counted in recsys_model_load_errors and named by /readyz; the service
	// starts anyway on the rest, an older version, or popularity.
	loadErrs := eng.LoadPersisted(ctx, st)
	for _, err := range loadErrs {
		c.Logger.Error("loading persisted models", "err", err)
	}
	jo := c.Jobs
	jo.Logger = c.Logger
	sched := jobs.NewScheduler(st, eng, jo)
	if err := sched.Recover(ctx); err != nil {
		st.Close()
		return nil, err
	}
	ready := func(ctx context.Context) error {
		if err := eng.Ready(ctx); err != nil {
			return err
		}
		if eng.Active() == nil && !c.AllowFallback {
			if len(loadErrs) > 0 {
				return api.Errorf(api.CodeModelNotReady, "the persisted models could not be loaded (%v); serving the popularity fallback: POST /admin/retrain, or start with --allow-fallback to report ready", errors.Join(loadErrs...))
			}
			return api.Errorf(api.CodeModelNotReady, "no trained model is loaded yet; POST /admin/retrain, or start with --allow-fallback to report ready while serving popularity")
		}
		return nil
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "recsys_model_load_errors",
			Help: "Persisted models (or the active model) that could not be loaded at start."},
			func() float64 { return float64(len(loadErrs)) }))
	deps := handlers.Deps{
		Interactions: st, Users: st, Items: st, Stats: st, Recommender: eng,
		Jobs: sched, JobRecords: st, Models: st, Reports: st,
		Ready: ready, OpenAPI: openAPISpec, Web: web.FS(),
		Keys:   handlers.Keys{App: c.AppKey, Admin: c.AdminKey, Exposed: !isLoopback(c.Addr)},
		Limits: c.Limits,
		Logger: c.Logger, Registry: reg,
	}
	h := handlers.New(deps)
	ln, err := net.Listen("tcp", c.Addr)
	if err != nil {
		st.Close()
		return nil, fmt.Errorf("--addr: %w", err)
	}
	for _, w := range exposureWarnings(c) {
		c.Logger.Warn(w, "addr", ln.Addr().String())
	}
	to := c.Server.withDefaults()
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: to.ReadHeader,
		ReadTimeout:       to.Read,
		WriteTimeout:      max(to.Write, c.Limits.RequestTimeout+time.Second),
		IdleTimeout:       to.Idle,
		ErrorLog:          slog.NewLogLogger(c.Logger.Handler(), slog.LevelWarn),
	}
	a := &App{cfg: c, store: st, engine: eng, sched: sched, deps: deps, ln: ln, srv: srv}
	if c.PprofAddr != "" {
		if a.pprofLn, err = net.Listen("tcp", c.PprofAddr); err != nil {
			ln.Close()
			st.Close()
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
		out = append(out, "admin routes and deletes are disabled (they answer 403 admin_disabled): start the server with --admin-key (or RECSYS_ADMIN_KEY) to enable them")
	}
	return out
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
	log.Info("serving", "addr", a.Addr(), "db", a.cfg.DB)
	jctx, stopJobs := context.WithCancel(context.WithoutCancel(ctx))
	jobsDone := make(chan struct{})
	go func() { defer close(jobsDone); a.sched.Run(jctx) }()
	errc := make(chan error, 1)
	go func() { errc <- a.srv.Serve(a.ln) }()
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

// parseModels reads a comma-separated list of model names.
func parseModels(s string) ([]string, error) {
	if s == "all" {
		return jobs.TrainableNames(), nil
	}
	var out []string
	for _, name := range strings.Split(s, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		if !jobs.Trainable(name) {
			return nil, fmt.Errorf("unknown model %q (known: %s)", name, strings.Join(jobs.TrainableNames(), ", "))
		}
		out = append(out, name)
	}
	if len(out) == 0 {
		return nil, errors.New("no models named")
	}
	return out, nil
}

// Close releases the store. Run must have returned.
func (a *App) Close() error { return a.store.Close() }
