package handlers

import (
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/recsys-engine/recsys/api"
)

// registerRecommendRoutes registers the routes that answer a ranked list:
// for a stored user, for an anonymous history, and the rerank of given
// items for a user.
func (h *handler) registerRecommendRoutes(r chi.Router) {
	r.With(h.requireApp).Get("/users/{id}/recommendations", h.serve(h.handleRecommendations))
	r.With(h.requireApp).Post("/recommendations", h.serve(h.handleRecommendPost))
	r.With(h.requireApp).Post("/users/{id}/rerank", h.serve(h.handleRerank))
}

// handleRecommendations answers the top n for a user from the requested or
// active model; an unknown user gets popularity (docs/design.md#api).
func (h *handler) handleRecommendations(w http.ResponseWriter, r *http.Request) (int, any, error) {
	req, err := h.recommendRequest(r)
	if err != nil {
		return 0, nil, err
	}
	p, err := h.place(&req, req.Steer.Placement, r.URL.Query().Has("n"))
	if err != nil {
		return 0, nil, err
	}
	arm := h.assign(r, &req)
	if p.Experiment != "" && arm.Experiment != p.Experiment {
		// The placement's experiment is not the running one: the active
		// model answers.
		req.Model, arm = "", api.Assignment{}
	}
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
	out.Placement = req.Steer.Placement
	h.shown(&out, req, rec, arm)
	return http.StatusOK, out, nil
}

// place narrows req by the settings of placement name (none for ""): its
// filter ANDed with the request's, its model unless the request names
// one, its n unless nGiven, its diversity narrowed by the request's
// (api.Diversity.Within). An unknown placement is not found.
func (h *handler) place(req *api.RecommendRequest, name string, nGiven bool) (api.Placement, error) {
	if name == "" {
		return api.Placement{}, nil
	}
	p, err := h.placement(name)
	if err != nil {
		return p, err
	}
	req.Steer.Placement = name
	if p.Filter != "" {
		req.Steer.Filters = append([]string{p.Filter}, req.Steer.Filters...)
	}
	if req.Model == "" {
		req.Model = p.Model
	}
	if !nGiven && p.N > 0 {
		req.N = p.N
		if err := h.checkPage(req.N, req.Offset); err != nil {
			return p, err
		}
	}
	req.Diversity = req.Diversity.Within(p.Diversity)
	return p, nil
}

// placement returns the served placement name.
func (h *handler) placement(name string) (api.Placement, error) {
	if p := api.ValidateName(name); p != "" {
		return api.Placement{}, api.FieldError("placement", p)
	}
	if h.Steering != nil {
		if p, ok := h.Steering.Placement(name); ok {
			return p, nil
		}
	}
	return api.Placement{}, api.Errorf(api.CodeNotFound, "placement %q not found; PUT /admin/placements/%s creates it", name, name)
}

// querySteering reads filter and placement, the parameters that filter
// and steer a ranked answer (docs/rules.md).
func querySteering(r *http.Request) (api.Steering, error) {
	var s api.Steering
	f, err := queryString(r, "filter", 4096)
	if err != nil {
		return s, err
	}
	if f != "" {
		s.Filters = []string{f}
	}
	s.Placement, err = queryString(r, "placement", 64)
	return s, err
}

// bodySteering is the steering of a body's filter and placement fields.
func bodySteering(filter, placement string) api.Steering {
	s := api.Steering{Placement: placement}
	if filter != "" {
		s.Filters = []string{filter}
	}
	return s
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
	if req.Diversity, err = queryDiversity(r); err != nil {
		return req, err
	}
	if req.Steer, err = querySteering(r); err != nil {
		return req, err
	}
	req.Explain, err = queryBool(r, "explain", false)
	return req, err
}

// queryDiversity reads max_per_category and diversity, the settings of
// the diversified list (docs/design.md#diversity).
func queryDiversity(r *http.Request) (api.Diversity, error) {
	var d api.Diversity
	var err error
	if d.MaxPerCategory, err = queryInt(r, "max_per_category", 0, 1, math.MaxInt32); err != nil {
		return d, err
	}
	s, err := queryValue(r, "diversity")
	if err != nil || s == "" {
		return d, err
	}
	l, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return d, api.FieldError("diversity", fmt.Sprintf("must be a number between 0 and 1, got %q", truncate(s)))
	}
	d.Lambda = &l
	return d, d.Validate()
}

// handleRecommendPost answers recommendations for an anonymous history:
// the items of the body stand for a user that is not stored, as a stored
// user's live history would (docs/design.md#api).
func (h *handler) handleRecommendPost(w http.ResponseWriter, r *http.Request) (int, any, error) {
	var in api.RecommendIn
	if err := h.decodeJSON(w, r, &in); err != nil {
		return 0, nil, err
	}
	if err := h.validate(in); err != nil {
		return 0, nil, err
	}
	req := api.RecommendRequest{History: in.Items, N: 10, Model: in.Model, Categories: in.Category,
		Exclude: in.Exclude, ExcludeConsumed: true, Explain: in.Explain,
		Diversity: api.DiversityOf(in.MaxPerCategory, in.Diversity), Steer: bodySteering(in.Filter, in.Placement)}
	if _, err := h.place(&req, in.Placement, in.N != nil); err != nil {
		return 0, nil, err
	}
	if in.N != nil {
		req.N = *in.N
	}
	if in.Offset != nil {
		req.Offset = *in.Offset
	}
	if in.ExcludeConsumed != nil {
		req.ExcludeConsumed = *in.ExcludeConsumed
	}
	if req.N < 1 || req.N > h.limits.MaxN {
		return 0, nil, api.FieldError("n", fmt.Sprintf("must be between 1 and %d, got %d", h.limits.MaxN, req.N))
	}
	if req.Offset < 0 {
		return 0, nil, api.FieldError("offset", fmt.Sprintf("must be at least 0, got %d", req.Offset))
	}
	if err := h.checkPage(req.N, req.Offset); err != nil {
		return 0, nil, err
	}
	rec, err := h.Recommender.Recommend(r.Context(), req)
	return h.recommendationsOut(req, api.Assignment{}, rec, err)
}

// handleRerank orders the items of the body by the model's scores for the
// user; see serving.Engine.Rerank for unknown, hidden, repeated and cold
// items and for a user without history.
func (h *handler) handleRerank(w http.ResponseWriter, r *http.Request) (int, any, error) {
	id, err := pathID(r, "id")
	if err != nil {
		return 0, nil, err
	}
	var in api.RerankIn
	if err := h.decodeJSON(w, r, &in); err != nil {
		return 0, nil, err
	}
	if err := h.validate(in); err != nil {
		return 0, nil, err
	}
	req := api.RecommendRequest{UserID: id, Model: in.Model, Diversity: api.DiversityOf(in.MaxPerCategory, in.Diversity),
		Steer: bodySteering(in.Filter, in.Placement)}
	if _, err := h.place(&req, in.Placement, true); err != nil {
		return 0, nil, err
	}
	rec, err := h.Recommender.Rerank(r.Context(), api.RerankRequest{UserID: id, Items: in.Items, Model: req.Model,
		Diversity: req.Diversity, Steer: req.Steer, Explain: in.Explain})
	return h.recommendationsOut(req, api.Assignment{}, rec, err)
}

// checkPage bounds a page: offset + n at most the largest n, since a page
// is cut from the list of offset + n items.
func (h *handler) checkPage(n, offset int) error {
	if offset+n > h.limits.MaxN {
		return api.FieldError("offset", fmt.Sprintf("offset + n must be at most %d, got %d + %d", h.limits.MaxN, offset, n))
	}
	return nil
}

// queryCategories reads the repeated category parameter: an item in any of
// them passes.
func queryCategories(r *http.Request) ([]string, error) {
	cats := r.URL.Query()["category"]
	if len(cats) > 100 {
		return nil, api.FieldError("category", fmt.Sprintf("may be given at most 100 times, got %d", len(cats)))
	}
	out := cats[:0:0]
	for _, c := range cats {
		if len(c) > 256 {
			return nil, api.FieldError("category", "must be at most 256 bytes")
		}
		if c != "" {
			out = append(out, c)
		}
	}
	return out, nil
}

// queryIDList reads a list of ids from a repeated parameter whose values
// may each hold several ids separated by commas. It splits the raw query,
// so an id holding a comma is sent with it escaped (%2C).
func queryIDList(r *http.Request, name string, max int) ([]string, error) {
	var out []string
	for _, kv := range strings.Split(r.URL.RawQuery, "&") {
		k, v, _ := strings.Cut(kv, "=")
		if k, err := url.QueryUnescape(k); err != nil || k != name {
			continue
		}
		for _, raw := range strings.Split(v, ",") {
			id, err := url.QueryUnescape(raw)
			if err != nil {
				return nil, api.FieldError(name, "is not a valid escaped query value")
			}
			if id == "" {
				continue
			}
			if p := api.ValidateID(id); p != "" {
				return nil, api.FieldError(name, fmt.Sprintf("%q %s", truncate(id), p))
			}
			if out = append(out, id); len(out) > max {
				return nil, api.FieldError(name, fmt.Sprintf("must list at most %d ids", max))
			}
		}
	}
	return out, nil
}
