package handlers

import (
	"context"
	"fmt"
	"net/http"
	"reflect"

	"github.com/go-chi/chi/v5"
	"github.com/go-json-experiment/json"

	"github.com/recsys-engine/recsys/api"
)

func (h *handler) registerItemRoutes(r chi.Router) {
	r.With(h.requireApp).Get("/items", h.serve(h.handleItemList))
	r.With(h.requireApp).Post("/items", h.serve(h.handleItemsPost))
	r.Route("/items/{id}", func(r chi.Router) {
		r.With(h.requireApp).Get("/", h.serve(h.handleItemGet))
		r.With(h.requireApp).Put("/", h.serve(h.handleItemPut))
		r.With(h.requireApp).Patch("/", h.serve(h.handleItemPatch))
		r.With(h.requireAdmin).Delete("/", h.serve(deleteByID(func(ctx context.Context, id string) error { return h.Items.DeleteItem(ctx, id) })))
		r.With(h.requireApp).Get("/similar", h.serve(h.handleItemSimilar))
	})
	r.With(h.requireApp).Post("/search/similar", h.serve(h.handleSearchSimilar))
}

// handleSearchSimilar ranks the catalogue by the learned content metric for
// a feature vector that is not in the catalogue (query by example).
func (h *handler) handleSearchSimilar(w http.ResponseWriter, r *http.Request) (int, any, error) {
	var in api.SearchIn
	if err := h.decodeValid(w, r, &in, h.decodeJSON); err != nil {
		return 0, nil, err
	}
	n := 10
	if in.N != nil {
		n = *in.N
	}
	if n > h.limits.MaxN {
		return 0, nil, api.FieldError("n", fmt.Sprintf("must be at most %d", h.limits.MaxN))
	}
	res, err := h.Recommender.SearchSimilar(r.Context(), in.Features, n)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, api.SearchOut{By: res.By, Model: res.Model, ModelVersion: res.ModelVersion, Items: res.Items}, nil
}

func (h *handler) handleItemGet(w http.ResponseWriter, r *http.Request) (int, any, error) {
	id, err := pathID(r, "id")
	if err != nil {
		return 0, nil, err
	}
	return h.itemOut(h.Items.Item(r.Context(), id))
}

// itemOut answers an item as stored.
func (h *handler) itemOut(it api.Item, err error) (int, any, error) {
	return http.StatusOK, api.NewItemOut(it), err
}

// handleItemPut creates or replaces one item and answers with it as stored.
func (h *handler) handleItemPut(w http.ResponseWriter, r *http.Request) (int, any, error) {
	id, err := pathID(r, "id")
	if err != nil {
		return 0, nil, err
	}
	var in api.ItemIn
	if err := h.decodeJSON(w, r, &in); err != nil {
		return 0, nil, err
	}
	if in.ID != "" && in.ID != id {
		return 0, nil, api.FieldError("id", "must match the id in the path or be left out")
	}
	in.ID = id
	if err := h.validate(in); err != nil {
		return 0, nil, err
	}
	if err := h.Items.PutItems(r.Context(), []api.Item{in.ToItem()}); err != nil {
		return 0, nil, err
	}
	return h.itemOut(h.Items.Item(r.Context(), id))
}

// handleItemPatch changes part of an item: the body is a JSON merge patch
// (RFC 7396) of the item as PUT takes it, so {"hidden":true} hides it and
// keeps everything else. The merged item is validated as PUT validates, and
// read, merged and stored in one transaction. An unknown item is 404:
// PATCH never creates.
func (h *handler) handleItemPatch(w http.ResponseWriter, r *http.Request) (int, any, error) {
	id, err := pathID(r, "id")
	if err != nil {
		return 0, nil, err
	}
	var patch any
	if err := h.decodeBody(w, r, &patch, itemPatchBody); err != nil {
		return 0, nil, err
	}
	if _, ok := patch.(map[string]any); !ok {
		return 0, nil, api.Errorf(api.CodeInvalid, "a merge patch of an item must be a JSON object, such as {\"hidden\":true}")
	}
	return h.itemOut(h.Items.UpdateItem(r.Context(), id, func(cur api.Item) (api.Item, error) {
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
	}))
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
func (h *handler) handleItemsPost(w http.ResponseWriter, r *http.Request) (int, any, error) {
	var in api.ItemsIn
	if err := h.decodeJSON(w, r, &in); err != nil {
		return 0, nil, err
	}
	if len(in.Items) > h.limits.MaxBatch {
		return 0, nil, api.FieldError("items", fmt.Sprintf("must have at most %d entries, got %d", h.limits.MaxBatch, len(in.Items)))
	}
	if err := h.validate(in); err != nil {
		return 0, nil, err
	}
	items := make([]api.Item, len(in.Items))
	seen := make(map[string]int, len(in.Items))
	for k, it := range in.Items {
		if it.ID == "" {
			return 0, nil, api.FieldError(fmt.Sprintf("items[%d].id", k), "is required")
		}
		if j, dup := seen[it.ID]; dup {
			return 0, nil, api.FieldError(fmt.Sprintf("items[%d].id", k), fmt.Sprintf("repeats items[%d].id", j))
		}
		seen[it.ID] = k
		items[k] = it.ToItem()
	}
	err := h.Items.PutItems(r.Context(), items)
	return http.StatusCreated, api.ItemsPutOut{Stored: len(items)}, err
}

func (h *handler) handleItemList(w http.ResponseWriter, r *http.Request) (int, any, error) {
	page, err := queryPage(r, 1024)
	if err != nil {
		return 0, nil, err
	}
	items, next, err := h.Items.Items(r.Context(), page)
	out := api.ItemsOut{Items: make([]api.ItemOut, len(items)), NextCursor: next}
	for k, it := range items {
		out.Items[k] = api.NewItemOut(it)
	}
	return http.StatusOK, out, err
}

// handleItemSimilar answers the n items most similar to one item.
func (h *handler) handleItemSimilar(w http.ResponseWriter, r *http.Request) (int, any, error) {
	id, err := pathID(r, "id")
	if err != nil {
		return 0, nil, err
	}
	n, err := queryInt(r, "n", 10, 1, h.limits.MaxN)
	if err != nil {
		return 0, nil, err
	}
	by, err := queryString(r, "by", 64)
	if err != nil {
		return 0, nil, err
	}
	switch by {
	case "":
		by = "collaborative"
	case "collaborative", "content", "hybrid":
	default:
		return 0, nil, api.FieldError("by", "must be collaborative, content or hybrid")
	}
	exclude, err := queryIDList(r, "exclude", api.MaxRequestItems)
	if err != nil {
		return 0, nil, err
	}
	div, err := queryDiversity(r)
	if err != nil {
		return 0, nil, err
	}
	steer, err := querySteering(r)
	if err != nil {
		return 0, nil, err
	}
	explain, err := queryBool(r, "explain", false)
	if err != nil {
		return 0, nil, err
	}
	// A placement gives similar items its filter, rules, n and diversity;
	// its model ranks only recommendations, so req.Model is not read.
	req := api.RecommendRequest{N: n, Diversity: div, Steer: steer}
	if _, err := h.place(&req, steer.Placement, r.URL.Query().Has("n")); err != nil {
		return 0, nil, err
	}
	sim, err := h.Recommender.Similar(r.Context(), api.SimilarRequest{ItemID: id, N: req.N, By: by, Exclude: exclude,
		Diversity: req.Diversity, Steer: req.Steer, Explain: explain})
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, api.SimilarOut{ItemID: sim.ItemID, By: sim.By, Model: sim.Model,
		ModelVersion: sim.ModelVersion, Items: sim.Items, Placement: req.Steer.Placement}, nil
}
