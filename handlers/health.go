package handlers

import (
	"io/fs"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/recsys-engine/recsys/api"
)

func (h *handler) registerHealthRoutes(r chi.Router) {
	r.Get("/healthz", h.handleHealthz)
	r.Get("/readyz", h.handleReadyz)
	if h.Version != nil {
		r.Get("/version", h.serve(h.handleVersion))
	}
	r.Method(http.MethodGet, "/metrics", h.envelopeErrors(h.metrics.handler))
	r.Get("/openapi.yaml", h.handleOpenAPI)
	r.With(h.requireApp).Get("/stats", h.serve(h.handleStats))
}

// handleHealthz answers liveness: the process serves HTTP.
func (h *handler) handleHealthz(w http.ResponseWriter, r *http.Request) {
	h.writeJSON(w, r, http.StatusOK, map[string]string{"status": "ok"})
}

// handleReadyz answers readiness: the store reads and the recommender can
// answer.
func (h *handler) handleReadyz(w http.ResponseWriter, r *http.Request) {
	if h.Ready != nil {
		if err := h.Ready(r.Context()); err != nil {
			if api.ErrorCode(err) == api.CodeInternal {
				h.log.Error("not ready", "err", err)
				err = api.Errorf(api.CodeUnavailable, "not ready: the store or model could not be read")
			}
			h.writeError(w, r, err)
			return
		}
	}
	h.writeJSON(w, r, http.StatusOK, map[string]string{"status": "ready"})
}

// handleVersion answers the build and schema versions. Like /healthz and
// /metrics it needs no key: it holds no data, and a deploy checks it.
func (h *handler) handleVersion(w http.ResponseWriter, r *http.Request) (int, any, error) {
	v, err := h.Version(r.Context())
	return http.StatusOK, v, err
}

func (h *handler) handleOpenAPI(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/yaml")
	_, _ = w.Write(h.OpenAPI)
}

// handleStats returns the store counters and daily activity.
func (h *handler) handleStats(w http.ResponseWriter, r *http.Request) (int, any, error) {
	days, err := queryInt(r, "days", 365, 1, 3650)
	if err != nil {
		return 0, nil, err
	}
	c, err := h.Stats.Counts(r.Context())
	if err != nil {
		return 0, nil, err
	}
	act, err := h.Stats.Activity(r.Context(), days)
	return http.StatusOK, api.StatsOut{Counts: c, EventsByDay: nonNil(act)}, err
}

func (h *handler) registerWebRoutes(r chi.Router) {
	if h.Web == nil {
		return
	}
	files := h.envelopeErrors(http.FileServer(http.FS(h.Web)))
	r.Get("/", files.ServeHTTP)
	if entries, err := fs.ReadDir(h.Web, "."); err == nil {
		for _, e := range entries {
			if e.IsDir() {
				r.Get("/"+e.Name()+"/*", files.ServeHTTP)
			} else if e.Name() != "index.html" {
				r.Get("/"+e.Name(), files.ServeHTTP)
			}
		}
	}
}

// registerDocsRoutes serves the API reference page (Deps.Docs) at /docs and
// /docs/, and its files under /docs/. Like the dashboard it needs no key: it
// holds no data, and it reads only /openapi.yaml, which is public too.
func (h *handler) registerDocsRoutes(r chi.Router) {
	if h.Docs == nil {
		return
	}
	// With the prefix cut, /docs and /docs/ both name the root, whose
	// index.html the file server answers.
	files := h.envelopeErrors(http.StripPrefix("/docs", http.FileServer(http.FS(h.Docs))))
	r.Get("/docs", files.ServeHTTP)
	r.Get("/docs/*", files.ServeHTTP)
}
