package record

import (
	"encoding/json"
	"fmt"

	"github.com/recsys-engine/recsys/api"
)

// rule is a stored rule, its name the key.
type rule struct {
	Condition  string   `json:"condition"`
	Action     string   `json:"action"`
	Factor     float64  `json:"factor,omitempty"`
	Position   int      `json:"position,omitempty"`
	Starts     int64    `json:"starts,omitempty"` // Unix ns; 0 open
	Ends       int64    `json:"ends,omitempty"`
	Placements []string `json:"placements,omitempty"`
	Created    int64    `json:"created"`
	Updated    int64    `json:"updated"`
}

// EncodeRule is the record of r, as both stores keep it.
func EncodeRule(r api.Rule) ([]byte, error) {
	return json.Marshal(rule{Condition: r.Condition, Action: r.Action, Factor: r.Factor, Position: r.Position,
		Starts: UnixNano(r.StartsAt), Ends: UnixNano(r.EndsAt), Placements: r.Placements,
		Created: UnixNano(r.CreatedAt), Updated: UnixNano(r.UpdatedAt)})
}

// DecodeRule reads EncodeRule's bytes of rule name.
func DecodeRule(name string, v []byte) (api.Rule, error) {
	var r rule
	if err := json.Unmarshal(v, &r); err != nil {
		return api.Rule{}, fmt.Errorf("rule %q: %w", name, err)
	}
	return api.Rule{Name: name, Condition: r.Condition, Action: r.Action, Factor: r.Factor, Position: r.Position,
		StartsAt: FromNano(r.Starts), EndsAt: FromNano(r.Ends), Placements: r.Placements,
		CreatedAt: FromNano(r.Created), UpdatedAt: FromNano(r.Updated)}, nil
}

// placement is a stored placement, its name the key.
type placement struct {
	Model          string   `json:"model,omitempty"`
	Experiment     string   `json:"experiment,omitempty"`
	N              int      `json:"n,omitempty"`
	Filter         string   `json:"filter,omitempty"`
	Rules          []string `json:"rules,omitempty"`
	MaxPerCategory int      `json:"max_per_category,omitempty"`
	Lambda         *float64 `json:"lambda,omitempty"`
	Updated        int64    `json:"updated"`
}

// EncodePlacement is the record of p, as both stores keep it.
func EncodePlacement(p api.Placement) ([]byte, error) {
	return json.Marshal(placement{Model: p.Model, Experiment: p.Experiment, N: p.N, Filter: p.Filter, Rules: p.Rules,
		MaxPerCategory: p.Diversity.MaxPerCategory, Lambda: p.Diversity.Lambda, Updated: UnixNano(p.UpdatedAt)})
}

// DecodePlacement reads EncodePlacement's bytes of placement name.
func DecodePlacement(name string, v []byte) (api.Placement, error) {
	var p placement
	if err := json.Unmarshal(v, &p); err != nil {
		return api.Placement{}, fmt.Errorf("placement %q: %w", name, err)
	}
	return api.Placement{Name: name, Model: p.Model, Experiment: p.Experiment, N: p.N, Filter: p.Filter, Rules: p.Rules,
		Diversity: api.Diversity{MaxPerCategory: p.MaxPerCategory, Lambda: p.Lambda}, UpdatedAt: FromNano(p.Updated)}, nil
}
