package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"recsys/api"
	"recsys/handlers"
	"recsys/jobs"
	"recsys/recsys/eval"
	"recsys/recsys/online"
	"recsys/recsys/serving"
	"recsys/retrieval"
)

func parseServeFlags(args []string, stderr io.Writer) (Config, error) {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c Config
	var types string
	var err error
	fs.StringVar(&c.Addr, "addr", envOr("RECSYS_ADDR", "127.0.0.1:8080"), "listen address (env RECSYS_ADDR)")
	db := dbFlag(fs, "./recsys.db", "the `database`: a bbolt file, or postgres://user:pass@host:port/db for PostgreSQL (env RECSYS_DB)")
	keyFlag(fs, &c.AppKey, "app-key", "application `key` guarding data routes and the erasure of a user's data; at least 16 bytes (env RECSYS_APP_KEY)", "RECSYS_APP_KEY")
	keyFlag(fs, &c.AdminKey, "admin-key", "admin `key` guarding /admin/* and item deletes; at least 16 bytes, not the application key (env RECSYS_ADMIN_KEY)", "RECSYS_ADMIN_KEY")
	fs.BoolVar(&c.Insecure, "insecure", envOr("RECSYS_INSECURE", "") == "1", "allow a non-loopback address with no keys (env RECSYS_INSECURE=1)")
	allowedHosts := fs.String("allowed-hosts", envOr("RECSYS_ALLOWED_HOSTS", ""), "comma-separated host names (or addresses) the server answers besides loopback ones; a server with no keys on loopback refuses any other Host, a server with keys does when this is given (env RECSYS_ALLOWED_HOSTS)")
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
	valUsers := fs.Int("validation-users", int(envInt("RECSYS_VALIDATION_USERS", eval.DefaultValidationUsers)), "retraining validates each grid point on a fixed-seed sample of this many users when there are more; 0: all (env RECSYS_VALIDATION_USERS)")
	fs.BoolVar(&c.Jobs.Auto, "auto", envOr("RECSYS_AUTO", "") == "1", "retrain triggers activate the model with the best validation ADG (env RECSYS_AUTO=1)")
	onlineOn := fs.Bool("online", envOr("RECSYS_ONLINE", "1") != "0", "name every recommendation answer, record impressions, attribute events and run experiments (env RECSYS_ONLINE=0 turns it off)")
	fs.DurationVar(&c.Online.Window, "attribution-window", envDuration("RECSYS_ATTRIBUTION_WINDOW", online.DefaultWindow), "a positive event without a recommendation_id is credited to the user's latest list that showed the item this long before (env RECSYS_ATTRIBUTION_WINDOW)")
	fs.DurationVar(&c.Online.Retention, "impression-retention", envDuration("RECSYS_IMPRESSION_RETENTION", online.DefaultRetention), "how long a recorded list is kept for attribution by its recommendation_id; its counts stay in /admin/online; 0 keeps every list (env RECSYS_IMPRESSION_RETENTION)")
	fs.Float64Var(&c.Online.Sample, "impression-sample", envFloat("RECSYS_IMPRESSION_SAMPLE", 1), "share of recommendation lists recorded in the impression log, in (0, 1] (env RECSYS_IMPRESSION_SAMPLE)")
	conv := fs.String("conversion-types", envOr("RECSYS_CONVERSION_TYPES", "purchase"), "event types that count as conversions (env RECSYS_CONVERSION_TYPES)")
	if err := parseFlags(fs, args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("serve takes no arguments, got %q", fs.Args())
	}
	c.DB = *db
	if c.AllowedHosts, err = parseAllowedHosts(*allowedHosts); err != nil {
		return c, err
	}
	if c.Jobs.Models, err = parseModels(*models); err != nil {
		return c, err
	}
	c.Jobs.Train = jobs.DefaultTrainOptions
	c.Jobs.Train.ValidationUsers = validationUsers(*valUsers)
	p, err := api.ParsePolicy(types)
	if err != nil {
		return c, fmt.Errorf("--event-types: %w", err)
	}
	c.Policy = p
	c.Online.Off = !*onlineOn
	if c.Online.Window <= 0 {
		return c, fmt.Errorf("--attribution-window must be positive")
	}
	retentionSet := false
	fs.Visit(func(f *flag.Flag) { retentionSet = retentionSet || f.Name == "impression-retention" })
	if _, ok := os.LookupEnv("RECSYS_IMPRESSION_RETENTION"); ok {
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
	for _, t := range strings.Split(*conv, ",") {
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

func envInt(key string, def int64) int64 {
	if v, err := strconv.ParseInt(envOr(key, ""), 10, 64); err == nil {
		return v
	}
	return def
}

func envFloat(key string, def float64) float64 {
	if v, err := strconv.ParseFloat(envOr(key, ""), 64); err == nil {
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
