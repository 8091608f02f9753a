package handlers

import (
	"fmt"
	"net/http"
	"reflect"

	"github.com/go-chi/chi/v5"
	"github.com/go-json-experiment/json"

	"recsys/api"
)

func (h *handler) registerItemRoutes(r chi.Router) {
	r.With(h.requireApp).Get("/items", h.handleItemList)
	r.With(h.requireApp).Post("/items", h.handleItemsPost)
	r.Route("/items/{id}", func(r chi.Router) {
		r.With(h.requireApp).Get("/", h.handleItemGet)
		r.With(h.requireApp).Put("/", h.handleItemPut)
		r.With(h.requireApp).Patch("/", h.handleItemPatch)
		r.With(h.requireAdmin).Delete("/", h.handleItemDelete)
		r.With(h.requireApp).Get("/similar", h.handleItemSimilar)
	})
	r.With(h.requireApp).Post("/search/similar", h.handleSearchSimilar)
}

// handleSearchSimilar ranks the catalogue by the learned content metric for
// a feature vector that is not in the catalogue (query by example).
func (h *handler) handleSearchSimilar(w http.ResponseWriter, r *http.Request) {
	var in api.SearchIn
	if err := h.decodeJSON(w, r, &in); err != nil {
		h.writeError(w, r, err)
		return
	}
	if err := h.validate(in); err != nil {
		h.writeError(w, r, err)
		return
	}
	n := 10
	if in.N != nil {
		n = *in.N
	}
	if n > h.limits.MaxN {
		h.writeError(w, r, api.FieldError("n", fmt.Sprintf("must be at most %d", h.limits.MaxN)))
		return
	}
	res, err := h.Recommender.SearchSimilar(r.Context(), in.Features, n)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	h.writeJSON(w, r, http.StatusOK, api.SearchOut{By: res.By, Model: res.Model, ModelVersion: res.ModelVersion, Items: res.Items})
}

func (h *handler) handleItemGet(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "id")
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	it, err := h.Items.Item(r.Context(), id)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	h.writeJSON(w, r, http.StatusOK, api.NewItemOut(it))
}

// handleItemPut creates or replaces one item and answers with it as stored.
func (h *handler) handleItemPut(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "id")
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	var in api.ItemIn
	if err := h.decodeJSON(w, r, &in); err != nil {
		h.writeError(w, r, err)
		return
	}
	if in.ID != "" && in.ID != id {
		h.writeError(w, r, api.FieldError("id", "must match the id in the path or be left out"))
		return
	}
	in.ID = id
	if err := h.validate(in); err != nil {
		h.writeError(w, r, err)
		return
	}
	if err := h.Items.PutItems(r.Context(), []api.Item{in.ToItem()}); err != nil {
		h.writeError(w, r, err)
		return
	}
	it, err := h.Items.Item(r.Context(), id)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	h.writeJSON(w, r, http.StatusOK, api.NewItemOut(it))
}

// handleItemPatch changes part of an item: the body is a JSON merge patch
// (RFC 7396) of the item as PUT takes it, so {"hidden":true} hides it and
// keeps everything else. The merged item is validated as PUT validates, and
// read, merged and stored in one transaction. An unknown item is 404:
// PATCH never creates.
func (h *handler) handleItemPatch(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "id")
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	var patch any
	if err := h.decodeBody(w, r, &patch, itemPatchBody); err != nil {
		h.writeError(w, r, err)
		return
	}
	if _, ok := patch.(map[string]any); !ok {
		h.writeError(w, r, api.Errorf(api.CodeInvalid, "a merge patch of an item must be a JSON object, such as {\"hidden\":true}"))
		return
	}
	it, err := h.Items.UpdateItem(r.Context(), id, func(cur api.Item) (api.Item, error) {
		in, err := patchItem(cur, patch)
		if err != nil {
			return api.Item{}, err
		}
		if in.ID != "" && in.ID != id {
			return api.Item{}, api.FieldError("id", "must match the id in the path or be left out")
		}
		in.ID = id
		if err := h.validate(in); err != nil {
			return api.Item{}, err
		}
		return in.ToItem(), nil
	})
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	h.writeJSON(w, r, http.StatusOK, api.NewItemOut(it))
}

// patchItem applies a merge patch to an item as PUT would take it and
// decodes the result with the rules of a PUT body.
func patchItem(cur api.Item, patch any) (api.ItemIn, error) {
	var doc any
	b, err := json.Marshal(api.ItemIn{Features: cur.Features, Categories: cur.Categories, Labels: cur.Labels, Hidden: cur.Hidden})
	if err == nil {
		err = json.Unmarshal(b, &doc)
	}
	if err == nil {
		b, err = json.Marshal(api.MergePatch(doc, patch))
	}
	if err != nil {
		return api.ItemIn{}, err
	}
	var in api.ItemIn
	if err := json.Unmarshal(b, &in, strictJSON); err != nil {
		return api.ItemIn{}, jsonError(err, reflect.TypeOf(in))
	}
	return in, nil
}

// handleItemsPost stores a batch of items, all or nothing.
func (h *handler) handleItemsPost(w http.ResponseWriter, r *http.Request) {
	var in api.ItemsIn
	if err := h.decodeJSON(w, r, &in); err != nil {
		h.writeError(w, r, err)
		return
	}
	if len(in.Items) > h.limits.MaxBatch {
		h.writeError(w, r, api.FieldError("items", fmt.Sprintf("must have at most %d entries, got %d", h.limits.MaxBatch, len(in.Items))))
		return
	}
	if err := h.validate(in); err != nil {
		h.writeError(w, r, err)
		return
	}
	items := make([]api.Item, len(in.Items))
	seen := make(map[string]int, len(in.Items))
	for k, it := range in.Items {
		if it.ID == "" {
			h.writeError(w, r, api.FieldError(fmt.Sprintf("items[%d].id", k), "is required"))
			return
		}
		if j, dup := seen[it.ID]; dup {
			h.writeError(w, r, api.FieldError(fmt.Sprintf("items[%d].id", k), fmt.Sprintf("repeats items[%d].id", j)))
			return
		}
		seen[it.ID] = k
		items[k] = it.ToItem()
	}
	if err := h.Items.PutItems(r.Context(), items); err != nil {
		h.writeError(w, r, err)
		return
	}
	h.writeJSON(w, r, http.StatusCreated, api.ItemsPutOut{Stored: len(items)})
}

func (h *handler) handleItemList(w http.ResponseWriter, r *http.Request) {
	limit, err := queryInt(r, "limit", 100, 1, 1000)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	cursor, err := queryString(r, "cursor", 1024)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	items, next, err := h.Items.Items(r.Context(), api.Page{Cursor: cursor, Limit: limit})
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	out := api.ItemsOut{Items: make([]api.ItemOut, len(items)), NextCursor: next}
	for k, it := range items {
		out.Items[k] = api.NewItemOut(it)
	}
	h.writeJSON(w, r, http.StatusOK, out)
}

func (h *handler) handleItemDelete(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "id")
	if err == nil {
		err = h.Items.DeleteItem(r.Context(), id)
	}
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// handleItemSimilar answers the n items most similar to one item.
func (h *handler) handleItemSimilar(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "id")
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	n, err := queryInt(r, "n", 10, 1, h.limits.MaxN)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	by := r.URL.Query().Get("by")
	switch by {
	case "":
		by = "collaborative"
	case "collaborative", "content", "hybrid":
	default:
		h.writeError(w, r, api.FieldError("by", "must be collaborative, content or hybrid"))
		return
	}
	sim, err := h.Recommender.Similar(r.Context(), api.SimilarRequest{ItemID: id, N: n, By: by})
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	h.writeJSON(w, r, http.StatusOK, api.SimilarOut{ItemID: sim.ItemID, By: sim.By, Model: sim.Model,
		ModelVersion: sim.ModelVersion, Items: sim.Items})
}
