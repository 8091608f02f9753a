package api

import (
	"context"
	"fmt"
	"strconv"
	"time"
)

// Online measurement (docs/design.md#online): what the service showed, the
// events attributed to it, and A/B experiments between models.

// Impression is one recommendation list as it was answered.
type Impression struct {
	ID           string // the answer's recommendation_id
	UserID       string
	Model        string // the model that ranked it ("popular" for the fallback)
	ModelVersion string
	Experiment   string // "" outside an experiment
	Arm          string
	Items        []string // in list order: position k is Items[k]
	At           time.Time
	// Placement is the placement the list was answered for ("" for
	// none). Left out of a dump's JSON when empty, as dumps made before
	// placements were counted have it.
	Placement string `json:",omitempty"`
}

// Touch is one positive event offered for attribution: to the list named
// by RecommendationID, or else to the user's latest list with ItemID shown
// no longer than the window before At.
type Touch struct {
	RecommendationID string
	UserID, ItemID   string
	At               time.Time // the server's clock when the event arrived
	Conversion       bool      // the event's type is a conversion type
}

// Attributed is a touch that was credited to a list position for the first
// time (a second click on the same shown item is not counted again).
type Attributed struct {
	RecommendationID string
	Position         int
	Model            string
	Experiment, Arm  string
	Placement        string
	Click            bool // the first positive event on this shown item
	Conversion       bool // the first conversion on this shown item
}

// OnlineCount is what was shown and attributed for one UTC day (of the
// impression), model, experiment, arm and placement.
type OnlineCount struct {
	Day         string // YYYY-MM-DD
	Model       string
	Experiment  string
	Arm         string
	Placement   string `json:",omitempty"` // "" for lists answered without a placement
	Lists       int64  // recommendation lists recorded
	Impressions int64  // items shown in them
	Clicks      int64  // shown items with an attributed positive event
	Conversions int64  // shown items with an attributed conversion event
}

// Experiment is an A/B test between models.
type Experiment struct {
	ID             string
	Name           string
	Arms           []Arm
	Alpha          float64 // the significance level of the sequential test
	MinImpressions int64   // per arm, before any winner is named
	CreatedAt      time.Time
	StoppedAt      time.Time // zero while it runs
}

// Running reports whether the experiment still assigns users.
func (e Experiment) Running() bool { return e.StoppedAt.IsZero() }

// Arm is one model of an experiment and the share of users it gets.
type Arm struct {
	Model string `json:"model"`
	Share int    `json:"share"` // percent; the arms' shares sum to 100
}

// OnlineStore persists impressions, attributions, their counters and
// experiments. Both stores implement it.
type OnlineStore interface {
	// PutImpressions records lists and adds them to the counters, in one
	// transaction.
	PutImpressions(ctx context.Context, imps []Impression) error
	// Attribute credits each touch to the list position that showed its
	// item (see Touch), at most once per shown item and kind, and adds the
	// credits to the counters of the impression's day, in one transaction.
	Attribute(ctx context.Context, touches []Touch, window time.Duration) ([]Attributed, error)
	// OnlineCounts lists the counters of the days from..to (YYYY-MM-DD,
	// inclusive), in day, model, experiment, arm, placement order.
	OnlineCounts(ctx context.Context, from, to string) ([]OnlineCount, error)
	// PruneImpressions deletes the oldest lists shown before before, at
	// most limit of them, with the credits of their items, in one
	// transaction, and returns how many it deleted. The counters keep
	// them: only a touch naming a deleted list can no longer be credited.
	PruneImpressions(ctx context.Context, before time.Time, limit int) (int, error)
	// CreateExperiment stores a new experiment with a fresh ID; it is a
	// conflict while another experiment runs.
	CreateExperiment(ctx context.Context, e Experiment) (Experiment, error)
	Experiment(ctx context.Context, id string) (Experiment, error)
	// Experiments lists all experiments, newest first.
	Experiments(ctx context.Context) ([]Experiment, error)
	// StopExperiment marks a running experiment stopped at at (a stopped
	// one is returned unchanged).
	StopExperiment(ctx context.Context, id string, at time.Time) (Experiment, error)
}

// Assignment is the experiment arm a recommendation request falls in.
type Assignment struct {
	Experiment string // "" when no experiment claims the request
	Arm        string
}

// OnlineService is what the handlers call: it assigns requests to
// experiment arms, records what was shown, attributes events and reports.
type OnlineService interface {
	// Assign picks the experiment arm of a request that names no model
	// and sets req.Model to the arm's model.
	Assign(ctx context.Context, req *RecommendRequest) Assignment
	// Shown records the answer (asynchronously, maybe sampled) and returns
	// its recommendation_id.
	Shown(req RecommendRequest, rec *Recommendations, a Assignment) string
	// Attribute credits the positive events of an acknowledged batch;
	// recIDs[k] is event k's recommendation_id ("" when none).
	Attribute(ctx context.Context, evs []Interaction, recIDs []string) (int, error)
	Report(ctx context.Context, from, to, model string) (OnlineReportOut, error)
	CreateExperiment(ctx context.Context, in ExperimentIn) (ExperimentOut, error)
	ExperimentReport(ctx context.Context, id string) (ExperimentOut, error)
	Experiments(ctx context.Context) (ExperimentsOut, error)
	StopExperiment(ctx context.Context, id string) (ExperimentOut, error)
}

// Interval is a proportion with its 95% confidence interval.
type Interval struct {
	Rate float64 `json:"rate"`
	Low  float64 `json:"low"`
	High float64 `json:"high"`
}

// Tally is what was shown and credited, with CTR = clicks / impressions
// and conversion = conversions / impressions and their intervals.
type Tally struct {
	Lists       int64    `json:"lists"`
	Impressions int64    `json:"impressions"`
	Clicks      int64    `json:"clicks"`
	Conversions int64    `json:"conversions"`
	CTR         Interval `json:"ctr"`
	Conversion  Interval `json:"conversion"`
}

// Add adds one counter row.
func (t *Tally) Add(c OnlineCount) {
	t.Lists += c.Lists
	t.Impressions += c.Impressions
	t.Clicks += c.Clicks
	t.Conversions += c.Conversions
}

// OnlineRow is one model's (and day's, or total) line of the online report.
type OnlineRow struct {
	Model string `json:"model"`
	Day   string `json:"day,omitempty"`
	Tally
}

// PlacementRow is one placement's line of the online report, over the
// whole range; Placement "" is the lists answered without a placement.
type PlacementRow struct {
	Placement string `json:"placement"`
	Tally
}

// OnlineReportOut answers GET /admin/online.
type OnlineReportOut struct {
	From       string         `json:"from"`
	To         string         `json:"to"`
	Days       []OnlineRow    `json:"days"`       // per model and day, day then model order
	Totals     []OnlineRow    `json:"totals"`     // per model over the whole range
	Placements []PlacementRow `json:"placements"` // per placement over the whole range, by name
}

// ExperimentIn is the body of POST /admin/experiments.
type ExperimentIn struct {
	Name           string  `json:"name" validate:"required,max=128"`
	Arms           []Arm   `json:"arms"`
	Alpha          float64 `json:"alpha,omitempty"`
	MinImpressions int64   `json:"min_impressions,omitempty"`
}

// ArmOut is one arm of an experiment report.
type ArmOut struct {
	Arm
	Tally
}

// TestOut is the significance test of an experiment.
type TestOut struct {
	Method string  `json:"method"`
	Alpha  float64 `json:"alpha"`
	// Statistic is the log of the smallest likelihood ratio of the leader
	// against another arm; the test is decisive when it reaches Threshold,
	// the log of (arms − 1) / Alpha.
	Statistic float64 `json:"statistic"`
	Threshold float64 `json:"threshold"`
	Decisive  bool    `json:"decisive"`
	Reason    string  `json:"reason"`
}

// ExperimentOut answers the experiment routes.
type ExperimentOut struct {
	ID             string     `json:"id"`
	Name           string     `json:"name"`
	State          string     `json:"state"` // running or stopped
	CreatedAt      time.Time  `json:"created_at"`
	StoppedAt      *time.Time `json:"stopped_at,omitempty"`
	Alpha          float64    `json:"alpha"`
	MinImpressions int64      `json:"min_impressions"`
	Arms           []ArmOut   `json:"arms"`
	Test           TestOut    `json:"test"`
	Winner         string     `json:"winner,omitempty"` // the winning arm's model once the test is decisive
	// Warnings of a running experiment: its arms whose models are over
	// the serving budget.
	Warnings []string `json:"warnings,omitempty"`
}

// ExperimentsOut lists experiments, newest first.
type ExperimentsOut struct {
	Experiments []ExperimentOut `json:"experiments"`
}

// NewRecommendationID names an answer shown at at: the time (Unix ns, 16
// hex digits) first, so that a store can find the list by its id alone,
// then the process's prefix and a sequence number.
func NewRecommendationID(at time.Time, prefix string, seq uint64) string {
	return fmt.Sprintf("%016x-%s%x", uint64(at.UnixNano()), prefix, seq)
}

// RecommendationIDsBefore is the string that the ids NewRecommendationID
// made for times before t sort below, and the others not.
func RecommendationIDsBefore(t time.Time) string {
	return fmt.Sprintf("%016x", uint64(t.UnixNano()))
}

// RecommendationTime is the time NewRecommendationID put in id; ok is
// false for an id it did not make.
func RecommendationTime(id string) (time.Time, bool) {
	if len(id) < 18 || id[16] != '-' {
		return time.Time{}, false
	}
	// Lower-case only, as made: the stores keep ids in the order of
	// their times, as strings (PruneImpressions).
	for _, c := range id[:16] {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return time.Time{}, false
		}
	}
	ns, err := strconv.ParseUint(id[:16], 16, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.Unix(0, int64(ns)).UTC(), true
}
