package handlers

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"recsys/api"
)

func (h *handler) registerUserRoutes(r chi.Router) {
	r.Route("/users/{id}", func(r chi.Router) {
		r.With(h.requireApp).Get("/", h.handleUserGet)
		r.With(h.requireAdmin).Delete("/", h.handleUserDelete)
		r.With(h.requireApp).Get("/interactions", h.handleUserInteractions)
		r.With(h.requireAdmin).Delete("/interactions/{item_id}", h.handleInteractionDelete)
		r.With(h.requireApp).Get("/recommendations", h.handleRecommendations)
	})
}

func (h *handler) handleUserGet(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "id")
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	u, err := h.Users.User(r.Context(), id)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	//lint:ignore S1016 the wire type is spelled out so that it can diverge from the stored one
	h.writeJSON(w, r, http.StatusOK, api.UserOut{ID: u.ID, CreatedAt: u.CreatedAt, LastSeen: u.LastSeen,
		Items: u.Items, Positives: u.Positives, Events: u.Events})
}

func (h *handler) handleUserDelete(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "id")
	if err == nil {
		err = h.Users.DeleteUser(r.Context(), id)
	}
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (h *handler) handleUserInteractions(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "id")
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	limit, err := queryInt(r, "limit", 100, 1, 1000)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	cursor, err := queryString(r, "cursor", 64)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	entries, next, err := h.Interactions.History(r.Context(), id, api.Page{Cursor: cursor, Limit: limit})
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	out := api.HistoryOut{UserID: id, Interactions: make([]api.HistoryEntryOut, len(entries)), NextCursor: next}
	for k, e := range entries {
		o := api.HistoryEntryOut{ItemID: e.ItemID, Type: e.LastType, Count: e.Count, FirstSeen: e.FirstSeen,
			LastSeen: e.LastSeen, Relevant: e.Positive, Negative: e.Negative}
		if e.HasValue {
			v := e.Value
			o.Value = &v
		}
		out.Interactions[k] = o
	}
	h.writeJSON(w, r, http.StatusOK, out)
}

func (h *handler) handleInteractionDelete(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "id")
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	item, err := pathID(r, "item_id")
	if err == nil {
		err = h.Interactions.DeleteInteraction(r.Context(), id, item)
	}
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// handleRecommendations answers the top n for a user from the requested or
// active model; an unknown user gets popularity (docs/design.md#api).
func (h *handler) handleRecommendations(w http.ResponseWriter, r *http.Request) {
	req, err := h.recommendRequest(r)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	rec, err := h.Recommender.Recommend(r.Context(), req)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	h.writeJSON(w, r, http.StatusOK, api.RecommendationsOut{UserID: rec.UserID, Model: rec.Model,
		ModelVersion: rec.ModelVersion, Items: rec.Items, Fallback: rec.Fallback})
}

func (h *handler) recommendRequest(r *http.Request) (api.RecommendRequest, error) {
	var req api.RecommendRequest
	var err error
	if req.UserID, err = pathID(r, "id"); err != nil {
		return req, err
	}
	if req.N, err = queryInt(r, "n", 10, 1, h.limits.MaxN); err != nil {
		return req, err
	}
	if req.Model, err = queryString(r, "model", 64); err != nil {
		return req, err
	}
	if req.Category, err = queryString(r, "category", 256); err != nil {
		return req, err
	}
	if req.ExcludeConsumed, err = queryBool(r, "exclude_consumed", true); err != nil {
		return req, err
	}
	req.Explain, err = queryBool(r, "explain", false)
	return req, err
}
