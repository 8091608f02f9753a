package handlers

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/recsys-engine/recsys/api"
)

func (h *handler) registerAdminRoutes(r chi.Router) {
	if h.Jobs == nil {
		return
	}
	r.With(h.requireApp).Get("/models", h.serve(h.handleModelList))
	r.With(h.requireApp).Get("/evaluations", h.serve(h.handleEvaluationList))
	r.With(h.requireApp).Get("/evaluations/{id}", h.serve(byJobID(http.StatusOK, func(ctx context.Context, id string) (*api.Report, error) {
		return h.Reports.Report(ctx, id)
	})))
	r.Route("/admin", func(r chi.Router) {
		r.Use(h.requireAdmin)
		r.Post("/retrain", h.serve(h.handleRetrain))
		r.Post("/evaluations", h.serve(h.handleEvaluationPost))
		r.Get("/jobs", h.serve(h.handleJobList))
		r.Get("/jobs/{id}", h.serve(byJobID(http.StatusOK, func(ctx context.Context, id string) (api.Job, error) {
			return h.JobRecords.Job(ctx, id)
		})))
		// Cancelling answers the job's record; it reaches "cancelled" once
		// the job has stopped.
		r.Delete("/jobs/{id}", h.serve(byJobID(http.StatusAccepted, func(ctx context.Context, id string) (api.Job, error) {
			return h.Jobs.Cancel(ctx, id)
		})))
		r.Post("/models/{name}/activate", h.serve(h.handleModelActivate))
		r.Get("/backup", h.handleBackup)
	})
}

// decodeOptional decodes a JSON body when there is one: these admin
// requests have sensible defaults for everything.
func (h *handler) decodeOptional(w http.ResponseWriter, r *http.Request, dst any) error {
	if r.Header.Get("Content-Type") != "" {
		return h.decodeJSON(w, r, dst)
	}
	if r.ContentLength == 0 {
		return nil
	}
	br := bufio.NewReader(r.Body)
	if _, err := br.Peek(1); err == io.EOF {
		return nil // an empty chunked body without a content type
	}
	r.Body = struct {
		io.Reader
		io.Closer
	}{br, r.Body}
	return h.decodeJSON(w, r, dst)
}

// handleRetrain starts a training job: 202 with its id, or 409 naming the
// training job already running (unless the body asks to queue).
func (h *handler) handleRetrain(w http.ResponseWriter, r *http.Request) (int, any, error) {
	var in api.RetrainIn
	if err := h.decodeValid(w, r, &in, h.decodeOptional); err != nil {
		return 0, nil, err
	}
	// The query parameters, when present, win over the body.
	var err error
	if in.Queue, err = queryBool(r, "queue", in.Queue); err == nil {
		in.Auto, err = queryBool(r, "auto", in.Auto)
	}
	if err != nil {
		return 0, nil, err
	}
	return jobAccepted(w)(h.Jobs.SubmitTrain(r.Context(), api.TrainRequest{Models: in.Models, Auto: in.Auto, Queue: in.Queue, Trigger: "api"}))
}

func (h *handler) handleEvaluationPost(w http.ResponseWriter, r *http.Request) (int, any, error) {
	var in api.EvaluationIn
	if err := h.decodeValid(w, r, &in, h.decodeOptional); err != nil {
		return 0, nil, err
	}
	return jobAccepted(w)(h.Jobs.SubmitEvaluation(r.Context(), api.EvaluationRequest(in)))
}

// jobAccepted answers a submitted job: 202 with its id and state, and its
// address in Location.
func jobAccepted(w http.ResponseWriter) func(api.Job, error) (int, any, error) {
	return func(j api.Job, err error) (int, any, error) {
		if err != nil {
			return 0, nil, err
		}
		w.Header().Set("Location", "/admin/jobs/"+j.ID)
		return http.StatusAccepted, api.JobAccepted{JobID: j.ID, State: j.State}, nil
	}
}

func (h *handler) handleJobList(w http.ResponseWriter, r *http.Request) (int, any, error) {
	limit, err := queryInt(r, "limit", 50, 1, 1000)
	if err != nil {
		return 0, nil, err
	}
	jobs, err := h.JobRecords.Jobs(r.Context(), limit)
	return http.StatusOK, api.JobsOut{Jobs: nonNil(jobs)}, err
}

// byJobID answers status and what get returns for the job id in the path
// (a job's record, or the report an evaluation job wrote).
func byJobID[T any](status int, get func(ctx context.Context, id string) (T, error)) endpoint {
	return func(_ http.ResponseWriter, r *http.Request) (int, any, error) {
		id := chi.URLParam(r, "id")
		if len(id) == 0 || len(id) > 64 || strings.ContainsFunc(id, func(c rune) bool { return c < '!' || c > '~' }) {
			return 0, nil, api.FieldError("id", "is not a job id")
		}
		v, err := get(r.Context(), id)
		return status, v, err
	}
}

func (h *handler) handleModelList(w http.ResponseWriter, r *http.Request) (int, any, error) {
	ms, err := h.Models.Models(r.Context())
	return http.StatusOK, api.ModelsOut{Models: nonNil(ms), ModelNames: h.Jobs.ModelNames()}, err
}

// handleModelActivate makes a model the default: 200 with its version,
// and a warning when its serving cost is over the serving budget.
func (h *handler) handleModelActivate(w http.ResponseWriter, r *http.Request) (int, any, error) {
	name := chi.URLParam(r, "name")
	if len(name) == 0 || len(name) > 64 {
		return 0, nil, api.FieldError("name", "must be 1-64 bytes")
	}
	warning, err := h.Jobs.Activate(r.Context(), name)
	if err != nil {
		return 0, nil, err
	}
	ms, err := h.Models.Models(r.Context())
	if err != nil {
		return 0, nil, err
	}
	for _, m := range ms {
		if m.Name == name && m.Active {
			return http.StatusOK, api.ModelActivated{ModelInfo: m, Warning: warning}, nil
		}
	}
	return 0, nil, api.Errorf(api.CodeInternal, "model %s activated but not listed", name)
}

func (h *handler) handleEvaluationList(w http.ResponseWriter, r *http.Request) (int, any, error) {
	reps, err := h.Reports.Reports(r.Context())
	if err != nil {
		return 0, nil, err
	}
	out := api.ReportsOut{Evaluations: make([]api.ReportSummary, 0, len(reps))}
	for _, rep := range reps {
		s := api.ReportSummary{ID: rep.ID, CreatedAt: rep.CreatedAt, Kind: rep.Kind, Dataset: rep.Dataset,
			Protocol: rep.Protocol, Folds: rep.Folds, Models: []string{}}
		for _, row := range rep.Rows {
			if rep.Kind == "recommendation" && row.Model == api.AutoReportRow {
				continue // auto mode's choice among the rows, no model of its own
			}
			name := row.Model + row.Method
			if row.Variant != "" {
				name = row.Variant
			}
			s.Models = append(s.Models, name)
		}
		out.Evaluations = append(out.Evaluations, s)
	}
	return http.StatusOK, out, nil
}
