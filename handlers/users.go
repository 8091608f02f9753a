package handlers

import (
	"context"
	"net/http"

	"github.com/go-chi/chi/v5"

	"recsys/api"
)

func (h *handler) registerUserRoutes(r chi.Router) {
	r.With(h.requireApp).Get("/users", h.serve(h.handleUserList))
	// Erasing a user, or one of their pairs, takes the application key: an
	// application honours a user's request to be forgotten without holding
	// the admin key.
	r.Route("/users/{id}", func(r chi.Router) {
		r.With(h.requireApp).Get("/", h.serve(h.handleUserGet))
		r.With(h.requireApp).Delete("/", h.serve(deleteByID(func(ctx context.Context, id string) error { return h.Users.DeleteUser(ctx, id) })))
		r.With(h.requireApp).Get("/interactions", h.serve(h.handleUserInteractions))
		r.With(h.requireApp).Delete("/interactions/{item_id}", h.serve(h.handleInteractionDelete))
		r.With(h.requireApp).Get("/recommendations", h.serve(h.handleRecommendations))
	})
}

func (h *handler) handleUserGet(w http.ResponseWriter, r *http.Request) (int, any, error) {
	id, err := pathID(r, "id")
	if err != nil {
		return 0, nil, err
	}
	u, err := h.Users.User(r.Context(), id)
	return http.StatusOK, api.NewUserOut(u), err
}

// handleUserList pages through the users in natural id order, as GET
// /items pages the catalogue.
func (h *handler) handleUserList(w http.ResponseWriter, r *http.Request) (int, any, error) {
	page, err := queryPage(r, 1024)
	if err != nil {
		return 0, nil, err
	}
	users, next, err := h.Users.Users(r.Context(), page)
	out := api.UsersOut{Users: make([]api.UserOut, len(users)), NextCursor: next}
	for k, u := range users {
		out.Users[k] = api.NewUserOut(u)
	}
	return http.StatusOK, out, err
}

func (h *handler) handleUserInteractions(w http.ResponseWriter, r *http.Request) (int, any, error) {
	id, err := pathID(r, "id")
	if err != nil {
		return 0, nil, err
	}
	page, err := queryPage(r, 64)
	if err != nil {
		return 0, nil, err
	}
	entries, next, err := h.Interactions.History(r.Context(), id, page)
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
	return http.StatusOK, out, err
}

func (h *handler) handleInteractionDelete(w http.ResponseWriter, r *http.Request) (int, any, error) {
	id, err := pathID(r, "id")
	if err != nil {
		return 0, nil, err
	}
	item, err := pathID(r, "item_id")
	if err == nil {
		err = h.Interactions.DeleteInteraction(r.Context(), id, item)
	}
	return http.StatusNoContent, nil, err
}

// handleRecommendations answers the top n for a user from the requested or
// active model; an unknown user gets popularity (docs/design.md#api).
func (h *handler) handleRecommendations(w http.ResponseWriter, r *http.Request) (int, any, error) {
	req, err := h.recommendRequest(r)
	if err != nil {
		return 0, nil, err
	}
	arm := h.assign(r, &req)
	rec, err := h.Recommender.Recommend(r.Context(), req)
	if r.Method == http.MethodHead && err == nil {
		// Nothing is shown: no recommendation id, no impression logged.
		out := api.NewRecommendationsOut(rec)
		out.Experiment, out.Arm = arm.Experiment, arm.Arm
		return http.StatusOK, out, nil
	}
	return h.recommendationsOut(req, arm, rec, err)
}

// recommendationsOut is the answer of every route that answers a ranked
// list for a user or a history: GET /users/{id}/recommendations, POST
// /recommendations, POST /users/{id}/rerank. Each list is named and put in
// the impression log; an anonymous history's list (no user) is credited
// only to events that send its recommendation_id back.
func (h *handler) recommendationsOut(req api.RecommendRequest, arm api.Assignment, rec *api.Recommendations, err error) (int, any, error) {
	if err != nil {
		return 0, nil, err
	}
	out := api.NewRecommendationsOut(rec)
	h.shown(&out, req, rec, arm)
	return http.StatusOK, out, nil
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
	if req.Offset, err = queryInt(r, "offset", 0, 0, h.limits.MaxN-1); err != nil {
		return req, err
	}
	if err = h.checkPage(req.N, req.Offset); err != nil {
		return req, err
	}
	if req.Model, err = queryString(r, "model", 64); err != nil {
		return req, err
	}
	if req.Categories, err = queryCategories(r); err != nil {
		return req, err
	}
	if req.Exclude, err = queryIDList(r, "exclude", api.MaxRequestItems); err != nil {
		return req, err
	}
	if req.ExcludeConsumed, err = queryBool(r, "exclude_consumed", true); err != nil {
		return req, err
	}
	req.Explain, err = queryBool(r, "explain", false)
	return req, err
}
