package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/handlers"
	"github.com/recsys-engine/recsys/jobs"
	"github.com/recsys-engine/recsys/recsys/eval"
	"github.com/recsys-engine/recsys/recsys/online"
	"github.com/recsys-engine/recsys/recsys/serving"
	"github.com/recsys-engine/recsys/retrieval"
)

// serveValues are the serve flags that parseServeFlags checks or converts
// before they reach Config.
type serveValues struct {
	db                                *string
	types, allowedHosts, models, conv string
	role                              string
	budget                            string
	trainTime, trainMemory            string
	valUsers                          int
	online                            bool
}

// newServeFlags defines serve's flags, which set c and v when parsed. It
// parses nothing, so that the configuration reference can be generated
// from the flag set (TestConfigurationDoc).
func newServeFlags(c *Config, v *serveValues, stderr io.Writer) *envFlags {
	fs := newEnvFlags("serve", stderr)
	fs.StringEnv(&c.Addr, "addr", "RECSYS_ADDR", "127.0.0.1:8080", "listen address (env RECSYS_ADDR)")
	v.db = fs.DBEnv("./recsys.db", "the `database`: a bbolt file, or postgres://user:pass@host:port/db for PostgreSQL (env RECSYS_DB)")
	fs.StringEnv(&v.role, "role", "RECSYS_ROLE", string(RoleAll), "what this process does among replicas: all (serve and train), serve (answer requests and queue jobs, never train) or train (run the jobs and retrain triggers, answer only /healthz, /readyz, /metrics and /admin/*); serve and train need a PostgreSQL --db (env RECSYS_ROLE)")
	fs.KeyEnv(&c.AppKey, "app-key", "RECSYS_APP_KEY", "application `key` guarding data routes and the erasure of a user's data; at least 16 bytes (env RECSYS_APP_KEY)")
	fs.KeyEnv(&c.AdminKey, "admin-key", "RECSYS_ADMIN_KEY", "admin `key` guarding /admin/* and item deletes; at least 16 bytes, not the application key (env RECSYS_ADMIN_KEY)")
	fs.BoolEnv(&c.Insecure, "insecure", "RECSYS_INSECURE", false, "allow a non-loopback address with no keys (env RECSYS_INSECURE=1)")
	fs.StringEnv(&v.allowedHosts, "allowed-hosts", "RECSYS_ALLOWED_HOSTS", "", "comma-separated host names (or addresses) the server answers besides loopback ones; a server with no keys on loopback refuses any other Host, a server with keys does when this is given (env RECSYS_ALLOWED_HOSTS)")
	fs.BoolVar(&c.Demo, "demo", false, "fill an empty database with a generated demo catalogue")
	fs.StringEnv(&v.types, "event-types", "RECSYS_EVENT_TYPES", api.DefaultPolicySpec, "accepted event types: name, name>=min, !negative (env RECSYS_EVENT_TYPES)")
	fs.Int64Env(&c.Limits.MaxBodyBytes, "max-body", "RECSYS_MAX_BODY", handlers.DefaultLimits.MaxBodyBytes, "largest request body in bytes (env RECSYS_MAX_BODY)")
	fs.IntEnv(&c.Limits.MaxBatch, "max-batch", "RECSYS_MAX_BATCH", handlers.DefaultLimits.MaxBatch, "largest batch of events or items (env RECSYS_MAX_BATCH)")
	fs.IntEnv(&c.Limits.MaxN, "max-n", "RECSYS_MAX_N", handlers.DefaultLimits.MaxN, "largest n for recommendations (env RECSYS_MAX_N)")
	fs.DurationEnv(&c.Limits.RequestTimeout, "request-timeout", "RECSYS_REQUEST_TIMEOUT", handlers.DefaultLimits.RequestTimeout, "per-request timeout (env RECSYS_REQUEST_TIMEOUT)")
	fs.Int64Env(&c.MaxDBSize, "max-db-size", "RECSYS_MAX_DB_SIZE", 0, "largest database file in bytes; writes beyond it get 507 (0: no limit; env RECSYS_MAX_DB_SIZE)")
	fs.DurationEnv(&c.Server.ReadHeader, "read-header-timeout", "RECSYS_READ_HEADER_TIMEOUT", DefaultServerTimeouts.ReadHeader, "time allowed to read a request's headers (env RECSYS_READ_HEADER_TIMEOUT)")
	fs.DurationEnv(&c.Server.Read, "read-timeout", "RECSYS_READ_TIMEOUT", DefaultServerTimeouts.Read, "time allowed to read a whole request, body included (env RECSYS_READ_TIMEOUT)")
	fs.DurationEnv(&c.Server.Write, "write-timeout", "RECSYS_WRITE_TIMEOUT", DefaultServerTimeouts.Write, "time allowed to write an answer; must exceed --request-timeout (env RECSYS_WRITE_TIMEOUT)")
	fs.DurationEnv(&c.Server.Idle, "idle-timeout", "RECSYS_IDLE_TIMEOUT", DefaultServerTimeouts.Idle, "how long an idle kept-alive connection stays open (env RECSYS_IDLE_TIMEOUT)")
	fs.BoolEnv(&c.AllowFallback, "allow-fallback", "RECSYS_ALLOW_FALLBACK", false, "report ready before a model is trained, serving popularity (env RECSYS_ALLOW_FALLBACK=1)")
	fs.DurationEnv(&c.Jobs.Interval, "retrain-interval", "RECSYS_RETRAIN_INTERVAL", jobs.DefaultInterval, "retrain on this schedule; 0 turns it off (env RECSYS_RETRAIN_INTERVAL)")
	fs.Int64Env(&c.Jobs.NewEvents, "retrain-after", "RECSYS_RETRAIN_AFTER", jobs.DefaultNewEvents, "retrain after this many new events; 0 turns it off (env RECSYS_RETRAIN_AFTER)")
	fs.StringEnv(&c.PprofAddr, "pprof", "RECSYS_PPROF", "", "serve net/http/pprof on this loopback address, e.g. 127.0.0.1:6060 (env RECSYS_PPROF)")
	fs.IntEnv(&c.ContentApproxAbove, "content-approx-above", "RECSYS_CONTENT_APPROX_ABOVE", retrieval.DefaultApproxAbove, "content search uses an approximate (HNSW) index above this many items; 0 = the default, -1 = always exact (env RECSYS_CONTENT_APPROX_ABOVE)")
	fs.IntEnv(&c.ColdSlotsPer10, "cold-slots-per-10", "RECSYS_COLD_SLOTS_PER_10", serving.DefaultColdSlotsPer10, "how many slots in ten of a recommendation list may go to cold items (no events yet) that earn them on content; 0 turns cold slots off (env RECSYS_COLD_SLOTS_PER_10)")
	fs.StringEnv(&v.models, "models", "RECSYS_MODELS", strings.Join(jobs.DefaultModels, ","), "models that retraining fits (env RECSYS_MODELS)")
	fs.IntEnv(&v.valUsers, "validation-users", "RECSYS_VALIDATION_USERS", eval.DefaultValidationUsers, "retraining validates each grid point on a fixed-seed sample of this many users when there are more; 0: all (env RECSYS_VALIDATION_USERS)")
	fs.BoolEnv(&c.Jobs.Auto, "auto", "RECSYS_AUTO", true, "the retrain triggers and the first training run auto mode: they fit --models and auto mode's other candidates (ease, rp3beta, wrmf, ials, febr-blend) within --train-budget and activate the best validation ADG within --serve-budget; --auto=false fits --models and keeps the active model (env RECSYS_AUTO=0)")
	fs.StringEnv(&v.budget, "serve-budget", "RECSYS_SERVE_BUDGET", api.DefaultServeBudget.String(), serveBudgetUsage+" (env RECSYS_SERVE_BUDGET)")
	fs.StringEnv(&v.trainTime, "train-budget", "RECSYS_TRAIN_BUDGET", api.FormatTrainTime(api.DefaultTrainTime), trainBudgetUsage+" (env RECSYS_TRAIN_BUDGET)")
	fs.StringEnv(&v.trainMemory, "train-memory", "RECSYS_TRAIN_MEMORY", defaultTrainMemory, trainMemoryUsage+" (env RECSYS_TRAIN_MEMORY)")
	fs.BoolEnv(&v.online, "online", "RECSYS_ONLINE", true, "name every recommendation answer, record impressions, attribute events and run experiments (env RECSYS_ONLINE=0 turns it off)")
	fs.DurationEnv(&c.Online.Window, "attribution-window", "RECSYS_ATTRIBUTION_WINDOW", online.DefaultWindow, "a positive event without a recommendation_id is credited to the user's latest list that showed the item this long before (env RECSYS_ATTRIBUTION_WINDOW)")
	fs.DurationEnv(&c.Online.Retention, "impression-retention", "RECSYS_IMPRESSION_RETENTION", online.DefaultRetention, "how long a recorded list is kept for attribution by its recommendation_id; its counts stay in /admin/online; 0 keeps every list (env RECSYS_IMPRESSION_RETENTION)")
	fs.Float64Env(&c.Online.Sample, "impression-sample", "RECSYS_IMPRESSION_SAMPLE", 1, "share of recommendation lists recorded in the impression log, in (0, 1] (env RECSYS_IMPRESSION_SAMPLE)")
	fs.StringEnv(&v.conv, "conversion-types", "RECSYS_CONVERSION_TYPES", "purchase", "event types that count as conversions (env RECSYS_CONVERSION_TYPES)")
	return fs
}

func parseServeFlags(args []string, stderr io.Writer) (Config, error) {
	var c Config
	var v serveValues
	var err error
	fs := newServeFlags(&c, &v, stderr)
	if err := parseFlags(fs.FlagSet, args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("serve takes no arguments, got %q", fs.Args())
	}
	c.DB = *v.db
	if c.Role, err = parseRole(v.role); err != nil {
		return c, err
	}
	if c.AllowedHosts, err = parseAllowedHosts(v.allowedHosts); err != nil {
		return c, err
	}
	if c.Jobs.Models, err = parseModels(v.models); err != nil {
		return c, err
	}
	if c.Jobs.Budget, err = api.ParseServeBudget(v.budget); err != nil {
		return c, fmt.Errorf("--serve-budget: %w", err)
	}
	c.Jobs.Train = jobs.DefaultTrainOptions
	c.Jobs.Train.ValidationUsers = validationUsers(v.valUsers)
	if c.Jobs.Train.Budget, err = parseTrainBudget(v.trainTime, v.trainMemory); err != nil {
		return c, err
	}
	p, err := api.ParsePolicy(v.types)
	if err != nil {
		return c, fmt.Errorf("--event-types: %w", err)
	}
	c.Policy = p
	c.Online.Off = !v.online
	if c.Online.Window <= 0 {
		return c, fmt.Errorf("--attribution-window must be positive")
	}
	retentionSet := false
	fs.Visit(func(f *flag.Flag) { retentionSet = retentionSet || f.Name == "impression-retention" })
	if _, ok := os.LookupEnv(fs.env["impression-retention"]); ok {
		retentionSet = true
	}
	if !retentionSet && c.Online.Window > c.Online.Retention {
		c.Online.Retention = c.Online.Window // the default covers a longer window
	}
	switch r := c.Online.Retention; {
	case r < 0:
		return c, fmt.Errorf("--impression-retention must not be negative (0 keeps every list)")
	case r == 0:
		c.Online.Retention = -1 // online.Options: keep every list
	case r < c.Online.Window:
		return c, fmt.Errorf("--impression-retention %v is shorter than --attribution-window %v: a list must be kept while events can be credited to it", r, c.Online.Window)
	}
	if !(c.Online.Sample > 0 && c.Online.Sample <= 1) {
		return c, fmt.Errorf("--impression-sample must be in (0, 1]")
	}
	for _, t := range strings.Split(v.conv, ",") {
		if t = strings.TrimSpace(t); t != "" {
			if _, ok := p.Types[t]; !ok {
				return c, fmt.Errorf("--conversion-types: %q is not an event type of --event-types", t)
			}
			c.Online.ConversionTypes = append(c.Online.ConversionTypes, t)
		}
	}
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

// serveBudgetUsage describes --serve-budget, a flag of serve and train.
const serveBudgetUsage = "the serving `budget` of the model a training job activates (the first training, auto mode): " +
	"CPU time of one core per recommendation request, as mean=DURATION,p99=DURATION, a key left out unbounded, or off; " +
	"the best validation ADG within it is activated, the cheapest model if none is, and a model over it activated by hand " +
	"or in an experiment arm gets a warning"

// parseAllowedHosts reads --allowed-hosts: host names or addresses, each
// optionally with a port (which the check ignores).
func parseAllowedHosts(s string) ([]string, error) {
	var out []string
	for _, h := range strings.Split(s, ",") {
		if h = strings.TrimSpace(h); h == "" {
			continue
		}
		name := handlers.HostName(h)
		if name == "" || strings.ContainsAny(h, "/@?#* \t") || strings.ContainsAny(name, "[]") {
			return nil, fmt.Errorf("--allowed-hosts: %q is not a host name or address (give names such as recsys.internal, without a scheme or path)", h)
		}
		out = append(out, name)
	}
	return out, nil
}

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c, err := parseServeFlags(args, stderr)
	if err != nil {
		return err
	}
	limitMemory(machineMemory(), 0, 0)
	app, err := NewApp(ctx, c)
	if err != nil {
		return err
	}
	defer app.Close()
	return app.Run(ctx)
}
