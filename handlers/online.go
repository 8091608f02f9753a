package handlers

import (
	"net/http"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/recsys-engine/recsys/api"
)

// The online routes: the report of what was shown and credited, and A/B
// experiments (docs/design.md#online).
func (h *handler) registerOnlineRoutes(r chi.Router) {
	if h.Online == nil {
		return
	}
	r.Route("/admin/online", func(r chi.Router) {
		r.Use(h.requireAdmin)
		r.Get("/", h.serve(h.handleOnlineReport))
	})
	r.Route("/admin/experiments", func(r chi.Router) {
		r.Use(h.requireAdmin)
		r.Get("/", h.serve(h.handleExperimentList))
		r.Post("/", h.serve(h.handleExperimentPost))
		r.Get("/{id}", h.serve(h.handleExperimentGet))
		r.Post("/{id}/stop", h.serve(h.handleExperimentStop))
	})
}

func (h *handler) handleOnlineReport(w http.ResponseWriter, r *http.Request) (int, any, error) {
	var from, to, model string
	var err error
	if from, err = queryString(r, "from", 10); err != nil {
		return 0, nil, err
	}
	if to, err = queryString(r, "to", 10); err != nil {
		return 0, nil, err
	}
	if model, err = queryString(r, "model", 64); err != nil {
		return 0, nil, err
	}
	out, err := h.Online.Report(r.Context(), from, to, model)
	return http.StatusOK, out, err
}

func (h *handler) handleExperimentList(w http.ResponseWriter, r *http.Request) (int, any, error) {
	out, err := h.Online.Experiments(r.Context())
	return http.StatusOK, out, err
}

func (h *handler) handleExperimentPost(w http.ResponseWriter, r *http.Request) (int, any, error) {
	var in api.ExperimentIn
	if err := h.decodeValid(w, r, &in, h.decodeJSON); err != nil {
		return 0, nil, err
	}
	out, err := h.Online.CreateExperiment(r.Context(), in)
	if err != nil {
		return 0, nil, err
	}
	w.Header().Set("Location", "/admin/experiments/"+out.ID)
	return http.StatusCreated, out, nil
}

func (h *handler) handleExperimentGet(w http.ResponseWriter, r *http.Request) (int, any, error) {
	out, err := h.Online.ExperimentReport(r.Context(), chi.URLParam(r, "id"))
	return http.StatusOK, out, err
}

func (h *handler) handleExperimentStop(w http.ResponseWriter, r *http.Request) (int, any, error) {
	out, err := h.Online.StopExperiment(r.Context(), chi.URLParam(r, "id"))
	return http.StatusOK, out, err
}

// assign puts a recommendation request into the running experiment's arm.
func (h *handler) assign(r *http.Request, req *api.RecommendRequest) api.Assignment {
	if h.Online == nil {
		return api.Assignment{}
	}
	return h.Online.Assign(r.Context(), req)
}

// shown names the answer and records it in the impression log.
func (h *handler) shown(out *api.RecommendationsOut, req api.RecommendRequest, rec *api.Recommendations, a api.Assignment) {
	if h.Online == nil {
		return
	}
	out.RecommendationID = h.Online.Shown(req, rec, a)
	out.Experiment, out.Arm = a.Experiment, a.Arm
}

// attribute credits the events of a stored batch to the lists that showed
// them. The events are durable already, so a failure is logged and counted
// (recsys_online_attribution_errors_total), not answered: a retry would
// store the batch twice.
func (h *handler) attribute(r *http.Request, evs []api.Interaction, in api.InteractionsIn) int {
	if h.Online == nil {
		return 0
	}
	ids := make([]string, len(evs))
	if in.Interactions == nil {
		ids[0] = in.RecommendationID
	} else {
		for k, e := range in.Interactions {
			ids[k] = e.RecommendationID
		}
	}
	n, err := h.Online.Attribute(r.Context(), evs, ids)
	if err != nil {
		h.log.Error("attributing events", "request_id", middleware.GetReqID(r.Context()), "err", err)
	}
	return n
}
