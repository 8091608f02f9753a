package api

import (
	"context"
	"time"
)

// Job states (docs/design.md#jobs).
const (
	JobQueued    = "queued"
	JobRunning   = "running"
	JobSucceeded = "succeeded"
	JobFailed    = "failed"
	JobCancelled = "cancelled"
)

// Job kinds.
const (
	JobTrain    = "train"
	JobEvaluate = "evaluate"
)

// Job is the record of one background job, stored as JSON.
type Job struct {
	ID       string        `json:"id"`
	Kind     string        `json:"kind"`
	Models   []string      `json:"models"`
	State    string        `json:"state"`
	Trigger  string        `json:"trigger"` // api, interval, interactions, startup, cli
	Progress float64       `json:"progress"`
	Stage    string        `json:"stage,omitempty"`
	Stages   []StageTiming `json:"stages"`
	Error    string        `json:"error,omitempty"`
	ReportID string        `json:"report_id,omitempty"`
	Versions []string      `json:"versions,omitempty"` // model versions the job produced
	// Skipped lists the models a succeeded training job was asked for but
	// did not fit, each with the reason (the content metric with too few
	// items that have features, a model over the training budget's memory,
	// an auto addition over its time); their previous versions keep
	// serving.
	Skipped []SkippedModel `json:"skipped,omitempty"`
	// Grid lists the models of a training job whose hyper-parameter search
	// went past the ends of its grid, chose a value still at an end of the
	// extended grid, or left points out for the training budget
	// (ModelInfo.GridExtended, GridEdge, GridSkipped).
	Grid []GridNote `json:"grid,omitempty"`
	// Auto marks a training job that activates the model with the best
	// validation ADG; Activated names the model a training job made the
	// default, if it changed it.
	Auto      bool   `json:"auto,omitempty"`
	Activated string `json:"activated,omitempty"`
	// Additions lists the models an auto job that named none added to
	// the server's models (auto mode's other candidates), among Models:
	// the time budget may leave them out (Skipped); the memory guard may
	// leave out any model.
	Additions []string `json:"additions,omitempty"`
	// OverBudget lists the candidates of a training job's choice of the
	// active model whose measured serving cost exceeds the serving budget
	// (ServeBudget), with by how much; the choice passed over them.
	OverBudget []OverBudget `json:"over_budget,omitempty"`
	CreatedAt  time.Time    `json:"created_at"`
	StartedAt  *time.Time   `json:"started_at,omitempty"`
	FinishedAt *time.Time   `json:"finished_at,omitempty"`
	// Options of an evaluation job.
	Protocol string `json:"protocol,omitempty"`
	Folds    int    `json:"folds,omitempty"`
	Seed     int64  `json:"seed,omitempty"`
}

// Done reports whether the job has ended.
func (j Job) Done() bool {
	return j.State == JobSucceeded || j.State == JobFailed || j.State == JobCancelled
}

// GridNote is one model's search past the ends of its grid: the values
// added ("k=2000") and the chosen ones still at an end ("k=4000"), and
// the points the training budget left out, with the reason
// (ModelInfo.GridSkipped).
type GridNote struct {
	Model    string   `json:"model"`
	Extended []string `json:"extended,omitempty"`
	Edge     []string `json:"edge,omitempty"`
	Skipped  []string `json:"skipped,omitempty"`
}

// SkippedModel is a model a job did not produce, and why.
type SkippedModel struct {
	Model  string `json:"model"`
	Reason string `json:"reason"`
}

// StageTiming is how long one stage of a job took.
type StageTiming struct {
	Name    string  `json:"name"`
	Seconds float64 `json:"seconds"`
}

// ModelInfo describes one persisted model version.
type ModelInfo struct {
	Name         string             `json:"name"`
	Version      string             `json:"version"`
	TrainedAt    time.Time          `json:"trained_at"`
	JobID        string             `json:"job_id,omitempty"`
	Users        int                `json:"users"`
	Items        int                `json:"items"`
	Positives    int                `json:"positives"`
	Params       map[string]float64 `json:"params"`
	Validation   map[string]float64 `json:"validation"`
	TrainSeconds float64            `json:"train_seconds"`
	Bytes        int                `json:"bytes"`
	Active       bool               `json:"active"`
	// GridExtended lists the values the search tried past the ends of its
	// grid because the choice sat there ("k=2000"); GridEdge the chosen
	// values still at an end of the extended grid ("k=4000").
	GridExtended []string `json:"grid_extended,omitempty"`
	GridEdge     []string `json:"grid_edge,omitempty"`
	// GridSkipped lists the grid points and extension steps the search
	// left out because their predicted time exceeded what was left of the
	// training budget, each with the prediction ("factors=400: predicted
	// 812 s, 95 s left of the budget").
	GridSkipped []string `json:"grid_skipped,omitempty"`
	// ServingCost is what a recommendation request to this version cost,
	// measured after fitting; nil when it was not measured (a model that
	// is not a recommender, or a version trained before the measure).
	ServingCost *ServingCost `json:"serving_cost,omitempty"`
}

// ServingCost is the CPU time of one core that recommendation requests
// to a model took, measured on a fixed sample of the training snapshot's
// users asking for 10 items with the default filters (package
// recsys/serving, CostProbe).
type ServingCost struct {
	MeanMS float64 `json:"mean_ms"`
	P50MS  float64 `json:"p50_ms"`
	P99MS  float64 `json:"p99_ms"`
	// Requests is how many requests were timed: the probe's count, or
	// fewer when the model reached the probe's CPU cap first.
	Requests int `json:"requests"`
}

// ModelActivated answers the activation of a model: the version now
// active and, when its serving cost is over the serving budget, a
// warning saying by how much (the activation is done all the same).
type ModelActivated struct {
	ModelInfo
	Warning string `json:"warning,omitempty"`
}

// ModelStore persists trained models and which one is active.
type ModelStore interface {
	PutModel(ctx context.Context, info ModelInfo, blob []byte) error
	Models(ctx context.Context) ([]ModelInfo, error)
	ModelBlob(ctx context.Context, name, version string) ([]byte, error)
	SetActiveModel(ctx context.Context, name string) error
	ActiveModel(ctx context.Context) (string, error)
}

// JobStore persists job records.
type JobStore interface {
	NewJobID(ctx context.Context) (string, error)
	PutJob(ctx context.Context, j Job) error
	Job(ctx context.Context, id string) (Job, error)
	Jobs(ctx context.Context, limit int) ([]Job, error)
	// RecoverJobs is called once at start-up by the only process using
	// the store: it marks every running job failed with reason (none can
	// be running yet, so they belong to a process that stopped) and
	// returns the queued ones, oldest first, to be run again.
	RecoverJobs(ctx context.Context, reason string) (queued []Job, failed int, err error)
}

// ReportStore persists evaluation reports.
type ReportStore interface {
	PutReport(ctx context.Context, r *Report) error
	Report(ctx context.Context, id string) (*Report, error)
	Reports(ctx context.Context) ([]*Report, error)
}

// EvaluationRequest configures an evaluation job on the stored data.
type EvaluationRequest struct {
	Models   []string
	Protocol string
	Folds    int
	Seed     int64
}

// JobService starts and cancels background jobs.
type JobService interface {
	SubmitTrain(ctx context.Context, req TrainRequest) (Job, error)
	SubmitEvaluation(ctx context.Context, req EvaluationRequest) (Job, error)
	Cancel(ctx context.Context, id string) (Job, error)
	// Activate makes a trained model the default, persistently. The
	// warning, when not empty, says that the model's serving cost is over
	// the serving budget.
	Activate(ctx context.Context, name string) (warning string, err error)
	// ModelNames lists the model names the requests above accept.
	ModelNames() ModelNames
}

// ModelNames are the model names a server accepts, from its registry.
type ModelNames struct {
	// Trainable are the names a training job accepts: the recommenders
	// and the content metric.
	Trainable []string `json:"trainable"`
	// Recommenders are the names evaluations, activation and ?model=
	// accept; the content metric is not one.
	Recommenders []string `json:"recommenders"`
	// Defaults are the server's --models, trained by a request that names
	// none; an evaluation that names none takes the recommenders among them.
	Defaults []string `json:"defaults"`
}

// TrainRequest asks for a training job.
type TrainRequest struct {
	// Models to fit; none means the server's models, with Auto and the
	// auto candidates they lack (Job.Additions).
	Models []string
	// Auto activates the fitted model with the best validation ADG, even
	// when another model is active.
	Auto bool
	// Queue queues behind a training job that is queued or running
	// instead of failing with a conflict.
	Queue   bool
	Trigger string
}
