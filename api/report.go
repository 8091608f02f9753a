package api

import "time"

// Report is an offline evaluation report: one row per model (and variant),
// one column per measure, mean and standard error over folds (docs/design.md#evaluation,
// dissertation Table 4.3). The JSON shape is the one of docs/design.md#evaluation.
type Report struct {
	ID        string    `json:"id,omitempty"`
	CreatedAt time.Time `json:"created_at,omitzero"`
	// Kind is "recommendation" (eval) or "retrieval" (eval-retrieval).
	Kind     string      `json:"kind,omitempty"`
	Dataset  string      `json:"dataset"`
	Protocol string      `json:"protocol,omitempty"`
	Folds    int         `json:"folds,omitempty"`
	Splits   int         `json:"splits,omitempty"`
	Seed     int64       `json:"seed"`
	Seconds  float64     `json:"seconds"`
	Rows     []ReportRow `json:"rows"`
}

// AutoReportRow is the Model of a recommendation report's auto row: in
// every fold, the row auto mode would activate (the best validation ADG).
const AutoReportRow = "auto"

// ReportRow is one model (or retrieval method) in a report.
type ReportRow struct {
	Model   string `json:"model,omitempty"`
	Method  string `json:"method,omitempty"`
	Variant string `json:"variant,omitempty"`
	// Params holds the chosen numeric hyper-parameters (k, lambda, factors...).
	Params map[string]float64 `json:"params"`
	// Settings holds non-numeric choices (a loss name, an affinity).
	Settings     map[string]string      `json:"settings,omitempty"`
	TrainSeconds float64                `json:"train_seconds"`
	Metrics      map[string]MetricValue `json:"metrics"`
	// Folds are the per-fold values Metrics summarise (recommendation
	// reports), from which the auto row is drawn.
	Folds []FoldValues `json:"folds,omitempty"`
}

// FoldValues are one fold of a report row: the chosen setting's
// validation ADG, its test measures and, for a protocol with a single
// split, their standard errors over the test users.
type FoldValues struct {
	// Model names the row the fold was drawn from (the auto row's
	// choice; the row's own name otherwise).
	Model         string             `json:"model"`
	Params        map[string]float64 `json:"params"`
	ValidationADG float64            `json:"validation_adg"`
	Test          map[string]float64 `json:"test"`
	TestUserSE    map[string]float64 `json:"test_user_se,omitempty"`
	TrainSeconds  float64            `json:"train_seconds"`
}

// MetricValue is the mean of a measure over folds with its standard error.
type MetricValue struct {
	Mean float64 `json:"mean"`
	SE   float64 `json:"se"`
}
