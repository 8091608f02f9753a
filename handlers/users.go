package handlers

import (
	"context"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/recsys-engine/recsys/api"
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
