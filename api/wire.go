package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"time"
)

// The JSON request and response types. Stored types never go on the wire;
// handlers convert. The `validate` tags are go-playground/validator's; the
// "recsysid" tag is registered by the handlers (see ValidateID).

// MaxBatch is the largest batch of interactions or items in one request.
const MaxBatch = 10000

// InteractionIn is one event in a POST /interactions body.
type InteractionIn struct {
	UserID    string     `json:"user_id" validate:"required,recsysid"`
	ItemID    string     `json:"item_id" validate:"required,recsysid"`
	Type      string     `json:"type,omitempty" validate:"omitempty,max=64"`
	Value     *float64   `json:"value,omitempty"`
	Timestamp *time.Time `json:"timestamp,omitempty"`
	// RecommendationID names the answer that showed the item, for
	// attribution (docs/design.md#online).
	RecommendationID string `json:"recommendation_id,omitempty" validate:"omitempty,max=64,printascii"`
}

// InteractionsIn is the body of POST /interactions: one event, or a batch
// under "interactions". Decoding one struct with both shapes lets the
// decoder reject unknown fields in either.
type InteractionsIn struct {
	InteractionIn
	Interactions []InteractionIn `json:"interactions"`
}

// InteractionsOut answers POST /interactions.
type InteractionsOut struct {
	Stored int `json:"stored"`
	// Attributed counts the events credited to a recommendation list.
	Attributed int `json:"attributed"`
}

// Timestamps are stored as Unix nanoseconds: the storable range.
var (
	MinTimestamp = time.Unix(0, 1).UTC()
	MaxTimestamp = time.Date(2262, 1, 1, 0, 0, 0, 0, time.UTC)
)

// CheckTimestamp reports why an event time cannot be stored.
func (in InteractionIn) CheckTimestamp() string {
	if in.Timestamp == nil {
		return ""
	}
	if t := *in.Timestamp; t.Before(MinTimestamp) || !t.Before(MaxTimestamp) {
		return "must be after 1970-01-01T00:00:00Z and before 2262-01-01T00:00:00Z"
	}
	return ""
}

// ToInteraction converts a validated request event, filling defaults.
func (in InteractionIn) ToInteraction(now time.Time) Interaction {
	ev := Interaction{UserID: in.UserID, ItemID: in.ItemID, Type: in.Type, Timestamp: now}
	if ev.Type == "" {
		ev.Type = DefaultType
	}
	if in.Value != nil {
		ev.Value, ev.HasValue = *in.Value, true
	}
	if in.Timestamp != nil {
		ev.Timestamp = in.Timestamp.UTC()
	}
	return ev
}

// Features is an item feature vector: a JSON array of numbers (stored under
// the names "0", "1", ...) or an object of name → number.
type Features map[string]float64

// MaxFeatures bounds the length of one feature vector.
const MaxFeatures = 4096

// UnmarshalJSON accepts an array or an object of finite numbers.
func (f *Features) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '[' {
		var xs []float64
		if err := json.Unmarshal(b, &xs); err != nil {
			return FieldError("features", "must be an array of numbers or an object of numbers")
		}
		if len(xs) > MaxFeatures {
			return FieldError("features", fmt.Sprintf("must have at most %d values", MaxFeatures))
		}
		m := make(Features, len(xs))
		for i, x := range xs {
			m[strconv.Itoa(i)] = x
		}
		*f = m
		return nil
	}
	var m map[string]float64
	if err := json.Unmarshal(b, &m); err != nil {
		return FieldError("features", "must be an array of numbers or an object of numbers")
	}
	if len(m) > MaxFeatures {
		return FieldError("features", fmt.Sprintf("must have at most %d values", MaxFeatures))
	}
	*f = m
	return nil
}

// Vector returns the features as a dense vector in the order of names.
func (f Features) Vector(names []string) []float64 {
	v := make([]float64, len(names))
	for i, n := range names {
		v[i] = f[n]
	}
	return v
}

// ItemIn is an item in PUT /items/{id} or POST /items.
type ItemIn struct {
	ID         string            `json:"id,omitempty" validate:"omitempty,recsysid"`
	Features   Features          `json:"features,omitempty" validate:"omitempty,max=4096,dive,keys,min=1,max=256,endkeys,finite"`
	Categories []string          `json:"categories,omitempty" validate:"omitempty,max=100,dive,min=1,max=256"`
	Labels     map[string]string `json:"labels,omitempty" validate:"omitempty,max=100,dive,keys,min=1,max=256,endkeys,max=4096"`
	Hidden     bool              `json:"hidden,omitempty"`
}

// ItemsIn is the body of POST /items.
type ItemsIn struct {
	Items []ItemIn `json:"items" validate:"required,min=1,max=10000,dive"`
}

// ItemsPutOut answers POST /items.
type ItemsPutOut struct {
	Stored int `json:"stored"`
}

// ToItem converts a validated request item.
func (in ItemIn) ToItem() Item {
	it := Item{ID: in.ID, Hidden: in.Hidden, Labels: in.Labels}
	if len(in.Features) > 0 {
		it.Features = map[string]float64(in.Features)
	}
	if len(in.Categories) > 0 {
		it.Categories = append([]string(nil), in.Categories...)
		sort.Strings(it.Categories)
	}
	return it
}

// IsFinite reports whether x is a finite number (JSON cannot carry NaN, but
// other decoders can).
func IsFinite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// ItemOut is an item in responses.
type ItemOut struct {
	ID         string             `json:"id"`
	Features   map[string]float64 `json:"features,omitempty"`
	Categories []string           `json:"categories,omitempty"`
	Labels     map[string]string  `json:"labels,omitempty"`
	Hidden     bool               `json:"hidden"`
	Positives  int64              `json:"positives"`
	CreatedAt  time.Time          `json:"created_at"`
	UpdatedAt  time.Time          `json:"updated_at"`
}

// NewItemOut converts a stored item for a response.
func NewItemOut(it Item) ItemOut {
	return ItemOut{ID: it.ID, Features: it.Features, Categories: it.Categories, Labels: it.Labels,
		Hidden: it.Hidden, Positives: it.Positives, CreatedAt: it.CreatedAt, UpdatedAt: it.UpdatedAt}
}

// ItemsOut is one page of GET /items.
type ItemsOut struct {
	Items      []ItemOut `json:"items"`
	NextCursor string    `json:"next_cursor,omitempty"`
}

// UserOut answers GET /users/{id}.
type UserOut struct {
	ID        string    `json:"id"`
	CreatedAt time.Time `json:"created_at"`
	LastSeen  time.Time `json:"last_seen"`
	Items     int64     `json:"items"`
	Positives int64     `json:"positives"`
	Events    int64     `json:"events"`
}

// UsersOut answers GET /users: a page of users in natural id order.
type UsersOut struct {
	Users      []UserOut `json:"users"`
	NextCursor string    `json:"next_cursor,omitempty"`
}

// NewUserOut converts a stored user.
func NewUserOut(u User) UserOut {
	//lint:ignore S1016 the wire type is spelled out so that it can diverge from the stored one
	return UserOut{ID: u.ID, CreatedAt: u.CreatedAt, LastSeen: u.LastSeen, Items: u.Items, Positives: u.Positives, Events: u.Events}
}

// HistoryEntryOut is one pair in GET /users/{id}/interactions.
type HistoryEntryOut struct {
	ItemID    string    `json:"item_id"`
	Type      string    `json:"type"`
	Count     int64     `json:"count"`
	Value     *float64  `json:"value,omitempty"`
	FirstSeen time.Time `json:"first_seen"`
	LastSeen  time.Time `json:"last_seen"`
	Relevant  bool      `json:"relevant"`
	Negative  bool      `json:"negative,omitempty"`
}

// HistoryOut is one page of a user's history.
type HistoryOut struct {
	UserID       string            `json:"user_id"`
	Interactions []HistoryEntryOut `json:"interactions"`
	NextCursor   string            `json:"next_cursor,omitempty"`
}

// RecommendationsOut answers GET /users/{id}/recommendations, POST
// /recommendations (no user_id) and POST /users/{id}/rerank.
type RecommendationsOut struct {
	UserID       string       `json:"user_id,omitempty"`
	Model        string       `json:"model"`
	ModelVersion string       `json:"model_version"`
	Items        []ScoredItem `json:"items"`
	Fallback     string       `json:"fallback,omitempty"`
	UnknownItems []string     `json:"unknown_items,omitempty"`
	HiddenItems  []string     `json:"hidden_items,omitempty"`
	// FilteredItems are the rerank candidates a filter left out.
	FilteredItems []string `json:"filtered_items,omitempty"`
	// Placement names the placement whose settings shaped the answer.
	Placement string `json:"placement,omitempty"`
	// RecommendationID names this answer; events that send it back are
	// attributed to it (docs/design.md#online).
	RecommendationID string `json:"recommendation_id,omitempty"`
	// Experiment and Arm name the A/B experiment arm that chose the model.
	Experiment string `json:"experiment,omitempty"`
	Arm        string `json:"arm,omitempty"`
}

// NewRecommendationsOut converts an answer of the recommender.
func NewRecommendationsOut(rec *Recommendations) RecommendationsOut {
	return RecommendationsOut{UserID: rec.UserID, Model: rec.Model, ModelVersion: rec.ModelVersion,
		Items: rec.Items, Fallback: rec.Fallback, UnknownItems: rec.UnknownItems, HiddenItems: rec.HiddenItems,
		FilteredItems: rec.FilteredItems}
}

// RecommendIn is the body of POST /recommendations: recommendations for
// an anonymous history.
type RecommendIn struct {
	Items           []string   `json:"items" validate:"required,min=1,max=10000,dive,recsysid"`
	N               *int       `json:"n,omitempty"`
	Offset          *int       `json:"offset,omitempty"`
	Model           string     `json:"model,omitempty" validate:"omitempty,max=64"`
	Category        StringList `json:"category,omitempty" validate:"omitempty,max=100,dive,min=1,max=256"`
	Exclude         []string   `json:"exclude,omitempty" validate:"omitempty,max=10000,dive,recsysid"`
	ExcludeConsumed *bool      `json:"exclude_consumed,omitempty"`
	Explain         bool       `json:"explain,omitempty"`
	MaxPerCategory  *int       `json:"max_per_category,omitempty" validate:"omitempty,min=1,max=2147483647"`
	Diversity       *float64   `json:"diversity,omitempty" validate:"omitempty,min=0,max=1"`
	Filter          string     `json:"filter,omitempty" validate:"omitempty,max=4096"`
	Placement       string     `json:"placement,omitempty" validate:"omitempty,max=64"`
}

// RerankIn is the body of POST /users/{id}/rerank.
type RerankIn struct {
	Items          []string `json:"items" validate:"required,min=1,max=10000,dive,recsysid"`
	Model          string   `json:"model,omitempty" validate:"omitempty,max=64"`
	MaxPerCategory *int     `json:"max_per_category,omitempty" validate:"omitempty,min=1,max=2147483647"`
	Diversity      *float64 `json:"diversity,omitempty" validate:"omitempty,min=0,max=1"`
	Filter         string   `json:"filter,omitempty" validate:"omitempty,max=4096"`
	Placement      string   `json:"placement,omitempty" validate:"omitempty,max=64"`
	Explain        bool     `json:"explain,omitempty"`
}

// DiversityOf is the Diversity a body's max_per_category and diversity
// ask for (nil: not asked).
func DiversityOf(maxPerCategory *int, lambda *float64) Diversity {
	var d Diversity
	if maxPerCategory != nil {
		d.MaxPerCategory = *maxPerCategory
	}
	d.Lambda = lambda
	return d
}

// StringList is a JSON string or an array of strings.
type StringList []string

// UnmarshalJSON accepts "x" or ["x", "y"].
func (l *StringList) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*l = StringList{s}
		return nil
	}
	var xs []string
	if err := json.Unmarshal(b, &xs); err != nil {
		return FieldError("category", "must be a string or an array of strings")
	}
	*l = xs
	return nil
}

// SimilarOut answers GET /items/{id}/similar.
type SimilarOut struct {
	ItemID       string       `json:"item_id"`
	By           string       `json:"by"`
	Model        string       `json:"model"`
	ModelVersion string       `json:"model_version"`
	Items        []ScoredItem `json:"items"`
	Placement    string       `json:"placement,omitempty"`
}

// ErrorOut is the error envelope of every failed request (docs/design.md#api).
type ErrorOut struct {
	Error ErrorBody `json:"error"`
}

// ErrorBody is the inside of the error envelope.
type ErrorBody struct {
	Code      string        `json:"code"`
	Message   string        `json:"message"`
	Details   []ErrorDetail `json:"details,omitempty"`
	RequestID string        `json:"request_id,omitempty"`
}

// RetrainIn is the (optional) body of POST /admin/retrain.
type RetrainIn struct {
	Models []string `json:"models,omitempty" validate:"omitempty,max=32,dive,min=1,max=64"`
	// Queue asks to queue behind a running training job instead of 409.
	Queue bool `json:"queue,omitempty"`
	// Auto activates the model with the best validation ADG.
	Auto bool `json:"auto,omitempty"`
}

// JobAccepted answers a request that started a job (202).
type JobAccepted struct {
	JobID string `json:"job_id"`
	State string `json:"state"`
}

// EvaluationIn is the (optional) body of POST /admin/evaluations.
type EvaluationIn struct {
	Models   []string `json:"models,omitempty" validate:"omitempty,max=32,dive,min=1,max=64"`
	Protocol string   `json:"protocol,omitempty" validate:"omitempty,oneof=standard novelty users time"`
	Folds    int      `json:"folds,omitempty" validate:"omitempty,min=1,max=10"`
	Seed     int64    `json:"seed,omitempty"`
}

// JobsOut lists jobs, newest first.
type JobsOut struct {
	Jobs []Job `json:"jobs"`
}

// ModelsOut lists trained model versions and the names requests accept
// (the dashboard offers those).
type ModelsOut struct {
	Models []ModelInfo `json:"models"`
	ModelNames
}

// ReportSummary is one entry of GET /evaluations.
type ReportSummary struct {
	ID        string    `json:"id"`
	CreatedAt time.Time `json:"created_at"`
	Kind      string    `json:"kind,omitempty"`
	Dataset   string    `json:"dataset"`
	Protocol  string    `json:"protocol,omitempty"`
	Folds     int       `json:"folds,omitempty"`
	Models    []string  `json:"models"`
}

// ReportsOut lists evaluation reports, newest first.
type ReportsOut struct {
	Evaluations []ReportSummary `json:"evaluations"`
}

// StatsOut answers GET /stats: the store's counters and the events per day.
type StatsOut struct {
	Counts
	EventsByDay []DayCount `json:"events_by_day"`
}

// SearchIn is the body of POST /search/similar: query by example.
type SearchIn struct {
	Features Features `json:"features" validate:"required,min=1,max=4096,dive,keys,min=1,max=256,endkeys,finite"`
	N        *int     `json:"n,omitempty" validate:"omitempty,min=1,max=1000"`
}

// SearchOut answers POST /search/similar.
type SearchOut struct {
	By           string       `json:"by"`
	Model        string       `json:"model"`
	ModelVersion string       `json:"model_version"`
	Items        []ScoredItem `json:"items"`
}
