package api

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"time"
)

// Rule is a business rule (docs/rules.md): while it is active, the items
// its Condition (a filter expression) matches are excluded, boosted by
// Factor, buried, or pinned at Position, in the answers of its
// Placements (every answer when there are none).
type Rule struct {
	Name      string
	Condition string
	Action    string // exclude, boost, bury, pin
	Factor    float64
	Position  int
	// StartsAt and EndsAt bound when the rule is active, [StartsAt,
	// EndsAt); a zero time leaves that side open.
	StartsAt, EndsAt time.Time
	Placements       []string
	CreatedAt        time.Time
	UpdatedAt        time.Time
}

// The actions of a rule.
const (
	ActionExclude = "exclude"
	ActionBoost   = "boost"
	ActionBury    = "bury"
	ActionPin     = "pin"
)

// ActiveAt reports whether the rule applies at t.
func (r Rule) ActiveAt(t time.Time) bool {
	return (r.StartsAt.IsZero() || !t.Before(r.StartsAt)) && (r.EndsAt.IsZero() || t.Before(r.EndsAt))
}

// Scoped reports whether the rule applies to the answers of placement
// ("" for an answer without one), which lists its own rules by name.
func (r Rule) Scoped(placement string, listed []string) bool {
	if len(r.Placements) == 0 || slices.Contains(listed, r.Name) {
		return true
	}
	return placement != "" && slices.Contains(r.Placements, placement)
}

// namePattern is what the name of a rule or a placement may be: it is a
// path segment and a metric label.
var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// ValidateName reports why s cannot name a rule or a placement.
func ValidateName(s string) string {
	if !namePattern.MatchString(s) {
		return "must be 1 to 64 letters, digits, '_', '.' or '-', starting with a letter or digit"
	}
	return ""
}

// Validate checks the rule's fields, all but the condition's syntax
// (which the serving engine compiles), and names the first bad one.
func (r Rule) Validate() error {
	if p := ValidateName(r.Name); p != "" {
		return FieldError("name", p)
	}
	if r.Condition == "" {
		return FieldError("condition", "must be a filter expression (docs/rules.md)")
	}
	switch r.Action {
	case ActionExclude, ActionBury:
	case ActionBoost:
		if !(r.Factor > 0) || r.Factor > 1e6 {
			return FieldError("factor", fmt.Sprintf("a boost needs a factor above 0 and at most 1e6, got %v", r.Factor))
		}
	case ActionPin:
		if r.Position < 1 || r.Position > 1000 {
			return FieldError("position", fmt.Sprintf("a pin needs a position from 1 to 1000, got %d", r.Position))
		}
	case "":
		return FieldError("action", "is required: exclude, boost, bury or pin")
	default:
		return FieldError("action", fmt.Sprintf("unknown action %q (known: exclude, boost, bury, pin)", r.Action))
	}
	if r.Action != ActionBoost && r.Factor != 0 {
		return FieldError("factor", fmt.Sprintf("only a boost takes a factor, not %s", r.Action))
	}
	if r.Action != ActionPin && r.Position != 0 {
		return FieldError("position", fmt.Sprintf("only a pin takes a position, not %s", r.Action))
	}
	if !r.StartsAt.IsZero() && !r.EndsAt.IsZero() && !r.EndsAt.After(r.StartsAt) {
		return FieldError("ends_at", "must be after starts_at")
	}
	if len(r.Placements) > 100 {
		return FieldError("placements", fmt.Sprintf("may name at most 100 placements, got %d", len(r.Placements)))
	}
	for k, p := range r.Placements {
		if msg := ValidateName(p); msg != "" {
			return FieldError(fmt.Sprintf("placements[%d]", k), msg)
		}
	}
	return nil
}

// Placement is a named surface of an application (docs/rules.md): the
// model or experiment that answers it, a default n, a filter, rules and
// diversity, which the parameters of a request naming it narrow.
type Placement struct {
	Name       string
	Model      string
	Experiment string
	N          int // 0: the server's default
	Filter     string
	Rules      []string
	Diversity  Diversity
	UpdatedAt  time.Time
}

// Validate checks the placement's fields, all but the filter's syntax.
func (p Placement) Validate(maxN int) error {
	if msg := ValidateName(p.Name); msg != "" {
		return FieldError("name", msg)
	}
	if p.Model != "" && p.Experiment != "" {
		return FieldError("experiment", "a placement names a model or an experiment, not both")
	}
	if p.N < 0 || p.N > maxN {
		return FieldError("n", fmt.Sprintf("must be between 1 and %d, got %d", maxN, p.N))
	}
	if len(p.Rules) > 100 {
		return FieldError("rules", fmt.Sprintf("may name at most 100 rules, got %d", len(p.Rules)))
	}
	for k, r := range p.Rules {
		if msg := ValidateName(r); msg != "" {
			return FieldError(fmt.Sprintf("rules[%d]", k), msg)
		}
	}
	return p.Diversity.Validate()
}

// Steering is what shapes a ranked answer besides the model: filter
// expressions every item must satisfy, and the placement whose rules
// apply (with none, the rules of every answer).
type Steering struct {
	Filters   []string
	Placement string
}

// RuleReader reads the stored rules and placements.
type RuleReader interface {
	// Rules lists every rule by name.
	Rules(ctx context.Context) ([]Rule, error)
	// Placements lists every placement by name.
	Placements(ctx context.Context) ([]Placement, error)
}

// RuleStore persists rules and placements. Both stores implement it.
type RuleStore interface {
	// CreateRule stores a new rule; a conflict if the name is taken.
	CreateRule(ctx context.Context, r Rule) error
	// UpdateRule replaces a stored rule; not found if there is none.
	UpdateRule(ctx context.Context, r Rule) error
	DeleteRule(ctx context.Context, name string) error
	// PutPlacement creates or replaces a placement and reports whether
	// it created it.
	PutPlacement(ctx context.Context, p Placement) (created bool, err error)
	DeletePlacement(ctx context.Context, name string) error
	RuleReader
}

// RuleIn is the body of POST /admin/rules and PUT /admin/rules/{name}.
type RuleIn struct {
	Name       string     `json:"name"`
	Condition  string     `json:"condition"`
	Action     string     `json:"action"`
	Factor     float64    `json:"factor,omitempty"`
	Position   int        `json:"position,omitempty"`
	StartsAt   *time.Time `json:"starts_at,omitempty"`
	EndsAt     *time.Time `json:"ends_at,omitempty"`
	Placements []string   `json:"placements,omitempty"`
}

// Rule is the rule the body describes.
func (in RuleIn) Rule() Rule {
	r := Rule{Name: in.Name, Condition: in.Condition, Action: in.Action, Factor: in.Factor,
		Position: in.Position, Placements: in.Placements}
	if in.StartsAt != nil {
		r.StartsAt = in.StartsAt.UTC()
	}
	if in.EndsAt != nil {
		r.EndsAt = in.EndsAt.UTC()
	}
	return r
}

// RuleOut answers the rule routes.
type RuleOut struct {
	Name       string     `json:"name"`
	Condition  string     `json:"condition"`
	Action     string     `json:"action"`
	Factor     float64    `json:"factor,omitempty"`
	Position   int        `json:"position,omitempty"`
	StartsAt   *time.Time `json:"starts_at,omitempty"`
	EndsAt     *time.Time `json:"ends_at,omitempty"`
	Placements []string   `json:"placements"`
	// Active says whether the rule applies now (between its times).
	Active    bool      `json:"active"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// NewRuleOut is the answer for r at time now.
func NewRuleOut(r Rule, now time.Time) RuleOut {
	out := RuleOut{Name: r.Name, Condition: r.Condition, Action: r.Action, Factor: r.Factor, Position: r.Position,
		Placements: r.Placements, Active: r.ActiveAt(now), CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
	if out.Placements == nil {
		out.Placements = []string{}
	}
	if !r.StartsAt.IsZero() {
		t := r.StartsAt
		out.StartsAt = &t
	}
	if !r.EndsAt.IsZero() {
		t := r.EndsAt
		out.EndsAt = &t
	}
	return out
}

// RulesOut answers GET /admin/rules.
type RulesOut struct {
	Rules []RuleOut `json:"rules"`
}

// PlacementIn is the body of PUT /admin/placements/{name}.
type PlacementIn struct {
	Model          string   `json:"model,omitempty"`
	Experiment     string   `json:"experiment,omitempty"`
	N              int      `json:"n,omitempty"`
	Filter         string   `json:"filter,omitempty"`
	Rules          []string `json:"rules,omitempty"`
	MaxPerCategory int      `json:"max_per_category,omitempty"`
	Diversity      *float64 `json:"diversity,omitempty"`
}

// Placement is the placement name the body describes.
func (in PlacementIn) Placement(name string) Placement {
	return Placement{Name: name, Model: in.Model, Experiment: in.Experiment, N: in.N, Filter: in.Filter,
		Rules: in.Rules, Diversity: Diversity{MaxPerCategory: in.MaxPerCategory, Lambda: in.Diversity}}
}

// PlacementOut answers the placement routes.
type PlacementOut struct {
	Name           string    `json:"name"`
	Model          string    `json:"model,omitempty"`
	Experiment     string    `json:"experiment,omitempty"`
	N              int       `json:"n,omitempty"`
	Filter         string    `json:"filter,omitempty"`
	Rules          []string  `json:"rules"`
	MaxPerCategory int       `json:"max_per_category,omitempty"`
	Diversity      *float64  `json:"diversity,omitempty"`
	UpdatedAt      time.Time `json:"updated_at"`
}

// NewPlacementOut is the answer for p.
func NewPlacementOut(p Placement) PlacementOut {
	out := PlacementOut{Name: p.Name, Model: p.Model, Experiment: p.Experiment, N: p.N, Filter: p.Filter,
		Rules: p.Rules, MaxPerCategory: p.Diversity.MaxPerCategory, Diversity: p.Diversity.Lambda, UpdatedAt: p.UpdatedAt}
	if out.Rules == nil {
		out.Rules = []string{}
	}
	return out
}

// PlacementsOut answers GET /admin/placements.
type PlacementsOut struct {
	Placements []PlacementOut `json:"placements"`
}
