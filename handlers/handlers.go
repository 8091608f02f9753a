// Package handlers turns HTTP requests into calls on the api services. It
// depends on interfaces only; main wires the store and the engine in.
package handlers

import (
	"context"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/go-playground/validator/v10"
	"github.com/prometheus/client_golang/prometheus"

	"recsys/api"
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

// Keys are the shared secrets. An empty key disables that check.
type Keys struct {
	App   string // guards writes and reads of user data
	Admin string // guards /admin/* and deletes; accepted wherever App is
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
	// Ready reports whether the service can answer recommendations.
	Ready    func(ctx context.Context) error
	OpenAPI  []byte
	Web      fs.FS // the dashboard; nil serves none
	Keys     Keys
	Limits   Limits
	Logger   *slog.Logger
	Registry *prometheus.Registry // nil: a private registry
	Now      func() time.Time
}

type handler struct {
	Deps
	limits    Limits
	log       *slog.Logger
	validator *validator.Validate
	metrics   *metrics
}

// New returns the HTTP handler of the whole API.
func New(d Deps) http.Handler {
	h := &handler{Deps: d, limits: d.Limits, log: d.Logger, validator: newValidator()}
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
	h.metrics = newMetrics(h.Registry, d.Stats)
	return h.routes()
}

func (h *handler) routes() chi.Router {
	r := chi.NewRouter()
	r.Use(middleware.RequestID, middleware.Recoverer, h.instrument, h.timeout)
	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		h.writeError(w, r, api.Errorf(api.CodeNotFound, "no route %s %s", r.Method, r.URL.Path))
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, r *http.Request) {
		h.writeError(w, r, &api.Error{Code: "method_not_allowed", Message: r.Method + " is not allowed on " + r.URL.Path})
	})
	h.registerHealthRoutes(r)
	h.registerInteractionRoutes(r)
	h.registerUserRoutes(r)
	h.registerItemRoutes(r)
	h.registerAdminRoutes(r)
	h.registerWebRoutes(r)
	return r
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
