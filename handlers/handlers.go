// Package handlers turns HTTP requests into calls on the api services. It
// depends on interfaces only; main wires the store and the engine in.
//
// Works cited in the comments are listed in docs/references.md.
package handlers

import (
	"context"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/go-playground/validator/v10"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/recsys-engine/recsys/api"
)

// Limits bound what one request may ask for.
type Limits struct {
	MaxBodyBytes   int64
	MaxBatch       int
	MaxN           int
	RequestTimeout time.Duration
}

// DefaultLimits are used for zero fields of Limits.
var DefaultLimits = Limits{MaxBodyBytes: 32 << 20, MaxBatch: api.MaxBatch, MaxN: 1000, RequestTimeout: 10 * time.Second}

// Keys are the shared secrets and what decides whether the admin routes
// may be open. An empty key disables that check, except that the admin
// routes are never open to anyone once the server is guarded (see
// authorize).
type Keys struct {
	App   string // guards writes and reads of user data, and their erasure
	Admin string // guards /admin/* and item deletes; accepted wherever App is
	// Exposed is set when the server listens on a non-loopback address.
	// The zero value is the loopback server of local development and of the
	// handler tests; main sets it from the listen address.
	Exposed bool
}

// Deps are everything the handlers call.
type Deps struct {
	Interactions api.InteractionService
	Users        api.UserService
	Items        api.ItemService
	Stats        api.StatsService
	Recommender  api.Recommender
	Jobs         api.JobService // nil: no admin routes
	JobRecords   api.JobStore
	Models       api.ModelStore
	Reports      api.ReportStore
	Online       api.OnlineService // nil: no recommendation ids, attribution or experiments
	Backup       Backuper          // nil: GET /admin/backup answers not_implemented
	Rules        api.RuleStore     // nil (or no Steering): no rule or placement routes
	Steering     Steering
	// Ready reports whether the service can answer recommendations.
	Ready    func(ctx context.Context) error
	OpenAPI  []byte
	Web      fs.FS // the dashboard; nil serves none
	Docs     fs.FS // the API reference page, served at /docs; nil serves none
	Keys     Keys
	Hosts    Hosts // the Host names answered (see checkHost)
	Limits   Limits
	Logger   *slog.Logger
	Registry *prometheus.Registry // nil: a private registry
	Now      func() time.Time

	// Version describes the build and the store's schema; nil serves no
	// GET /version.
	Version func(ctx context.Context) (api.VersionOut, error)

	// TrainOnly is a process that runs the training jobs and serves no
	// data (serve --role train): it answers /healthz, /readyz, /metrics
	// and /admin/* only, and 404 naming its role to every other route.
	TrainOnly bool
}

type handler struct {
	Deps
	limits     Limits
	log        *slog.Logger
	validator  *validator.Validate
	metrics    *metrics
	routeTable []routeEntry
	// crossOrigin tells a browser's cross-site request (checkCrossSite).
	crossOrigin *http.CrossOriginProtection
}

// New returns the HTTP handler of the whole API.
func New(d Deps) http.Handler {
	h := &handler{Deps: d, limits: d.Limits, log: d.Logger, validator: newValidator(),
		crossOrigin: http.NewCrossOriginProtection()}
	if h.limits.MaxBodyBytes == 0 {
		h.limits.MaxBodyBytes = DefaultLimits.MaxBodyBytes
	}
	if h.limits.MaxBatch == 0 {
		h.limits.MaxBatch = DefaultLimits.MaxBatch
	}
	if h.limits.MaxN == 0 {
		h.limits.MaxN = DefaultLimits.MaxN
	}
	if h.limits.RequestTimeout == 0 {
		h.limits.RequestTimeout = DefaultLimits.RequestTimeout
	}
	if h.log == nil {
		h.log = slog.Default()
	}
	if h.Now == nil {
		h.Now = time.Now
	}
	if h.Registry == nil {
		h.Registry = prometheus.NewRegistry()
	}
	h.Hosts.Allowed = make([]string, len(d.Hosts.Allowed))
	for k, name := range d.Hosts.Allowed {
		h.Hosts.Allowed[k] = HostName(name)
	}
	h.metrics = newMetrics(h.Registry, d.Stats)
	return h.routes()
}

func (h *handler) routes() chi.Router {
	r := chi.NewRouter()
	r.Use(headAsGet, middleware.RequestID, h.recoverer, h.instrument, h.browserGuard, h.trainOnly, h.timeout)
	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		h.writeError(w, r, api.Errorf(api.CodeNotFound, "no route %s %s", r.Method, r.URL.Path))
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, req *http.Request) {
		allowed := h.allowed(req)
		w.Header().Set("Allow", strings.Join(allowed, ", "))
		h.writeError(w, req, api.Errorf(api.CodeMethodNotAllowed, "%s is not allowed on %s (allowed: %s)", req.Method, req.URL.Path, strings.Join(allowed, ", ")))
	})
	h.registerHealthRoutes(r)
	h.registerInteractionRoutes(r)
	h.registerUserRoutes(r)
	h.registerItemRoutes(r)
	h.registerRecommendRoutes(r)
	h.registerAdminRoutes(r)
	h.registerOnlineRoutes(r)
	h.registerRuleRoutes(r)
	h.registerWebRoutes(r)
	h.registerDocsRoutes(r)
	h.routeTable = routeTable(r)
	return r
}

// trainOnlyMessage says where the routes a train process refuses are.
const trainOnlyMessage = "this process runs with --role train: it answers only /healthz, /readyz, /metrics and /admin/*; " +
	"send %s %s to a replica started with --role serve or all"

// trainOnly refuses, at a process of Deps.TrainOnly, every route but the
// health, metrics and admin ones. The answer is a 404, not a 503 to
// retry: the route is not there however often it is asked. Its message
// names the role, so that a load balancer that sends data requests to a
// trainer is found at once.
func (h *handler) trainOnly(next http.Handler) http.Handler {
	if !h.TrainOnly {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch p := r.URL.Path; {
		case p == "/healthz", p == "/readyz", p == "/metrics", p == "/admin", strings.HasPrefix(p, "/admin/"):
			next.ServeHTTP(w, r)
		default:
			h.writeError(w, r, api.Errorf(api.CodeNotFound, trainOnlyMessage, r.Method, r.URL.Path))
		}
	})
}

// routeEntry is one registered route, for the Allow header of a 405.
type routeEntry struct {
	method string
	re     *regexp.Regexp
}

var paramPattern = regexp.MustCompile(`\{[^}]+\}`)

// routeTable lists the registered routes as patterns over escaped paths.
func routeTable(r chi.Routes) []routeEntry {
	var out []routeEntry
	_ = chi.Walk(r, func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		route = strings.TrimSuffix(strings.ReplaceAll(route, "/*/", "/"), "/")
		if route == "" {
			route = "/"
		}
		route = paramPattern.ReplaceAllString(route, "\x00")
		pat := strings.ReplaceAll(regexp.QuoteMeta(route), "\x00", "[^/]+")
		pat = strings.ReplaceAll(pat, `\*`, ".*")
		out = append(out, routeEntry{method: method, re: regexp.MustCompile("^" + pat + "/?$")})
		return nil
	})
	return out
}

// allowed lists the methods registered for the request's path.
func (h *handler) allowed(r *http.Request) []string {
	path := r.URL.EscapedPath()
	var out []string
	for _, e := range h.routeTable {
		if e.re.MatchString(path) && !slices.Contains(out, e.method) {
			out = append(out, e.method)
			if e.method == http.MethodGet && !slices.Contains(out, http.MethodHead) {
				out = append(out, http.MethodHead) // headAsGet
			}
		}
	}
	slices.Sort(out)
	return out
}

// headAsGet answers HEAD on every GET route by running the GET handler:
// net/http sends the headers it sets and drops the body. No route
// registers HEAD itself. (chi's middleware.GetHead looks for a HEAD route
// first and finds one at every subrouter's root, where its look-ahead
// matches the mount, so /items/{id} would stay a 405.)
func headAsGet(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodHead {
			chi.RouteContext(r.Context()).RouteMethod = http.MethodGet
		}
		next.ServeHTTP(w, r)
	})
}

// recoverer turns a panic into a logged internal error with the envelope.
func (h *handler) recoverer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				h.writeError(w, r, fmt.Errorf("panic: %v\n%s", v, debug.Stack()))
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// timeout bounds every request's context by the request timeout.
func (h *handler) timeout(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), h.limits.RequestTimeout)
		defer cancel()
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// pathID reads an id from the route and validates it. Ids are matched on
// the escaped path so that an id may contain "/" as %2F.
func pathID(r *http.Request, name string) (string, error) {
	raw := chi.URLParam(r, name)
	id := raw
	if r.URL.RawPath != "" {
		var err error
		if id, err = url.PathUnescape(raw); err != nil {
			return "", api.FieldError(name, "is not a valid escaped path segment")
		}
	}
	if p := api.ValidateID(id); p != "" {
		return "", api.FieldError(name, p)
	}
	return id, nil
}

func routePattern(r *http.Request) string {
	if rc := chi.RouteContext(r.Context()); rc != nil {
		if p := rc.RoutePattern(); p != "" {
			return p
		}
	}
	return "unmatched"
}
