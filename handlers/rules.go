package handlers

import (
	"context"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/recsys-engine/recsys/api"
)

// Steering is what the rule and placement routes and the ranked answers
// need of the serving engine (serving.Engine).
type Steering interface {
	// Placement returns the served placement name.
	Placement(name string) (api.Placement, bool)
	// CheckExpression answers an invalid-field error naming the line and
	// column of what does not compile in src.
	CheckExpression(field, src string) error
	// LoadSteering serves the rules and placements of the store.
	LoadSteering(ctx context.Context, src api.RuleReader) error
}

// registerRuleRoutes registers /admin/rules and /admin/placements
// (docs/rules.md).
func (h *handler) registerRuleRoutes(r chi.Router) {
	if h.Rules == nil || h.Steering == nil {
		return
	}
	r.Route("/admin/rules", func(r chi.Router) {
		r.Use(h.requireAdmin)
		r.Get("/", h.serve(h.handleRuleList))
		r.Post("/", h.serve(h.handleRulePost))
		r.Get("/{name}", h.serve(h.handleRuleGet))
		r.Put("/{name}", h.serve(h.handleRulePut))
		r.Delete("/{name}", h.serve(h.handleRuleDelete))
	})
	r.Route("/admin/placements", func(r chi.Router) {
		r.Use(h.requireAdmin)
		r.Get("/", h.serve(h.handlePlacementList))
		r.Get("/{name}", h.serve(h.handlePlacementGet))
		r.Put("/{name}", h.serve(h.handlePlacementPut))
		r.Delete("/{name}", h.serve(h.handlePlacementDelete))
	})
}

// pathName reads the {name} of a rule or placement route.
func pathName(r *http.Request) (string, error) {
	name := chi.URLParam(r, "name")
	if p := api.ValidateName(name); p != "" {
		return "", api.FieldError("name", p)
	}
	return name, nil
}

// reload serves the stored rules and placements after a write. The write
// is committed: a failure to reload is logged, and the next write or
// replica sync serves it.
func (h *handler) reload(ctx context.Context) {
	if err := h.Steering.LoadSteering(ctx, h.Rules); err != nil {
		h.log.Warn("serving the stored rules and placements", "err", err)
	}
}

// ruleIn decodes and checks the body of a rule write.
func (h *handler) ruleIn(w http.ResponseWriter, r *http.Request) (api.Rule, error) {
	var in api.RuleIn
	if err := h.decodeJSON(w, r, &in); err != nil {
		return api.Rule{}, err
	}
	rule := in.Rule()
	if err := rule.Validate(); err != nil {
		return rule, err
	}
	return rule, h.Steering.CheckExpression("condition", rule.Condition)
}

func (h *handler) handleRuleList(w http.ResponseWriter, r *http.Request) (int, any, error) {
	rs, err := h.Rules.Rules(r.Context())
	if err != nil {
		return 0, nil, err
	}
	out := api.RulesOut{Rules: make([]api.RuleOut, 0, len(rs))}
	now := h.Now()
	for _, x := range rs {
		out.Rules = append(out.Rules, api.NewRuleOut(x, now))
	}
	return http.StatusOK, out, nil
}

// rule reads the stored rule name.
func (h *handler) rule(ctx context.Context, name string) (api.Rule, error) {
	rs, err := h.Rules.Rules(ctx)
	if err != nil {
		return api.Rule{}, err
	}
	for _, x := range rs {
		if x.Name == name {
			return x, nil
		}
	}
	return api.Rule{}, api.Errorf(api.CodeNotFound, "rule %q not found", name)
}

func (h *handler) handleRulePost(w http.ResponseWriter, r *http.Request) (int, any, error) {
	rule, err := h.ruleIn(w, r)
	if err != nil {
		return 0, nil, err
	}
	now := h.Now().UTC()
	rule.CreatedAt, rule.UpdatedAt = now, now
	if err := h.Rules.CreateRule(r.Context(), rule); err != nil {
		return 0, nil, err
	}
	h.reload(r.Context())
	w.Header().Set("Location", "/admin/rules/"+rule.Name)
	return http.StatusCreated, api.NewRuleOut(rule, now), nil
}

func (h *handler) handleRuleGet(w http.ResponseWriter, r *http.Request) (int, any, error) {
	name, err := pathName(r)
	if err != nil {
		return 0, nil, err
	}
	rule, err := h.rule(r.Context(), name)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, api.NewRuleOut(rule, h.Now()), nil
}

// handleRulePut replaces a stored rule; the body may leave out the name,
// and must not name another.
func (h *handler) handleRulePut(w http.ResponseWriter, r *http.Request) (int, any, error) {
	name, err := pathName(r)
	if err != nil {
		return 0, nil, err
	}
	var in api.RuleIn
	if err := h.decodeJSON(w, r, &in); err != nil {
		return 0, nil, err
	}
	if in.Name == "" {
		in.Name = name
	}
	if in.Name != name {
		return 0, nil, api.FieldError("name", "must be the name in the path, or left out")
	}
	rule := in.Rule()
	if err := rule.Validate(); err != nil {
		return 0, nil, err
	}
	if err := h.Steering.CheckExpression("condition", rule.Condition); err != nil {
		return 0, nil, err
	}
	old, err := h.rule(r.Context(), name)
	if err != nil {
		return 0, nil, err
	}
	now := h.Now().UTC()
	rule.CreatedAt, rule.UpdatedAt = old.CreatedAt, now
	if err := h.Rules.UpdateRule(r.Context(), rule); err != nil {
		return 0, nil, err
	}
	h.reload(r.Context())
	return http.StatusOK, api.NewRuleOut(rule, now), nil
}

func (h *handler) handleRuleDelete(w http.ResponseWriter, r *http.Request) (int, any, error) {
	name, err := pathName(r)
	if err != nil {
		return 0, nil, err
	}
	if err := h.Rules.DeleteRule(r.Context(), name); err != nil {
		return 0, nil, err
	}
	h.reload(r.Context())
	return http.StatusNoContent, nil, nil
}

func (h *handler) handlePlacementList(w http.ResponseWriter, r *http.Request) (int, any, error) {
	ps, err := h.Rules.Placements(r.Context())
	if err != nil {
		return 0, nil, err
	}
	out := api.PlacementsOut{Placements: make([]api.PlacementOut, 0, len(ps))}
	for _, p := range ps {
		out.Placements = append(out.Placements, api.NewPlacementOut(p))
	}
	return http.StatusOK, out, nil
}

func (h *handler) handlePlacementGet(w http.ResponseWriter, r *http.Request) (int, any, error) {
	name, err := pathName(r)
	if err != nil {
		return 0, nil, err
	}
	ps, err := h.Rules.Placements(r.Context())
	if err != nil {
		return 0, nil, err
	}
	for _, p := range ps {
		if p.Name == name {
			return http.StatusOK, api.NewPlacementOut(p), nil
		}
	}
	return 0, nil, api.Errorf(api.CodeNotFound, "placement %q not found", name)
}

// handlePlacementPut creates or replaces a placement: 201 when it
// created it, else 200.
func (h *handler) handlePlacementPut(w http.ResponseWriter, r *http.Request) (int, any, error) {
	name, err := pathName(r)
	if err != nil {
		return 0, nil, err
	}
	var in api.PlacementIn
	if err := h.decodeJSON(w, r, &in); err != nil {
		return 0, nil, err
	}
	p := in.Placement(name)
	if err := p.Validate(h.limits.MaxN); err != nil {
		return 0, nil, err
	}
	if p.Filter != "" {
		if err := h.Steering.CheckExpression("filter", p.Filter); err != nil {
			return 0, nil, err
		}
	}
	p.UpdatedAt = h.Now().UTC()
	created, err := h.Rules.PutPlacement(r.Context(), p)
	if err != nil {
		return 0, nil, err
	}
	h.reload(r.Context())
	if created {
		return http.StatusCreated, api.NewPlacementOut(p), nil
	}
	return http.StatusOK, api.NewPlacementOut(p), nil
}

func (h *handler) handlePlacementDelete(w http.ResponseWriter, r *http.Request) (int, any, error) {
	name, err := pathName(r)
	if err != nil {
		return 0, nil, err
	}
	if err := h.Rules.DeletePlacement(r.Context(), name); err != nil {
		return 0, nil, err
	}
	h.reload(r.Context())
	return http.StatusNoContent, nil, nil
}
