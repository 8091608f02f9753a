package handlers

import (
	"bufio"
	"io"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"

	"recsys/api"
)

func (h *handler) registerAdminRoutes(r chi.Router) {
	if h.Jobs == nil {
		return
	}
	r.With(h.requireApp).Get("/models", h.handleModelList)
	r.With(h.requireApp).Get("/evaluations", h.handleEvaluationList)
	r.With(h.requireApp).Get("/evaluations/{id}", h.handleEvaluationGet)
	r.Route("/admin", func(r chi.Router) {
		r.Use(h.requireAdmin)
		r.Post("/retrain", h.handleRetrain)
		r.Post("/evaluations", h.handleEvaluationPost)
		r.Get("/jobs", h.handleJobList)
		r.Get("/jobs/{id}", h.handleJobGet)
		r.Delete("/jobs/{id}", h.handleJobCancel)
		r.Post("/models/{name}/activate", h.handleModelActivate)
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
func (h *handler) handleRetrain(w http.ResponseWriter, r *http.Request) {
	var in api.RetrainIn
	if err := h.decodeOptional(w, r, &in); err != nil {
		h.writeError(w, r, err)
		return
	}
	if err := h.validate(in); err != nil {
		h.writeError(w, r, err)
		return
	}
	// The query parameters, when present, win over the body.
	var err error
	if in.Queue, err = queryBool(r, "queue", in.Queue); err == nil {
		in.Auto, err = queryBool(r, "auto", in.Auto)
	}
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	j, err := h.Jobs.SubmitTrain(r.Context(), api.TrainRequest{Models: in.Models, Auto: in.Auto, Queue: in.Queue, Trigger: "api"})
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	w.Header().Set("Location", "/admin/jobs/"+j.ID)
	h.writeJSON(w, r, http.StatusAccepted, api.JobAccepted{JobID: j.ID, State: j.State})
}

func (h *handler) handleEvaluationPost(w http.ResponseWriter, r *http.Request) {
	var in api.EvaluationIn
	if err := h.decodeOptional(w, r, &in); err != nil {
		h.writeError(w, r, err)
		return
	}
	if err := h.validate(in); err != nil {
		h.writeError(w, r, err)
		return
	}
	j, err := h.Jobs.SubmitEvaluation(r.Context(), api.EvaluationRequest(in))
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	w.Header().Set("Location", "/admin/jobs/"+j.ID)
	h.writeJSON(w, r, http.StatusAccepted, api.JobAccepted{JobID: j.ID, State: j.State})
}

func (h *handler) handleJobList(w http.ResponseWriter, r *http.Request) {
	limit, err := queryInt(r, "limit", 50, 1, 1000)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	jobs, err := h.JobRecords.Jobs(r.Context(), limit)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	if jobs == nil {
		jobs = []api.Job{}
	}
	h.writeJSON(w, r, http.StatusOK, api.JobsOut{Jobs: jobs})
}

// jobID reads and checks a job id from the path.
func jobID(r *http.Request) (string, error) {
	id := chi.URLParam(r, "id")
	if len(id) == 0 || len(id) > 64 || strings.ContainsFunc(id, func(c rune) bool { return c < '!' || c > '~' }) {
		return "", api.FieldError("id", "is not a job id")
	}
	return id, nil
}

func (h *handler) handleJobGet(w http.ResponseWriter, r *http.Request) {
	id, err := jobID(r)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	j, err := h.JobRecords.Job(r.Context(), id)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	h.writeJSON(w, r, http.StatusOK, j)
}

// handleJobCancel cancels a running or queued job and answers with its
// record; the record reaches "cancelled" once the job has stopped.
func (h *handler) handleJobCancel(w http.ResponseWriter, r *http.Request) {
	id, err := jobID(r)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	j, err := h.Jobs.Cancel(r.Context(), id)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	h.writeJSON(w, r, http.StatusAccepted, j)
}

func (h *handler) handleModelList(w http.ResponseWriter, r *http.Request) {
	ms, err := h.Models.Models(r.Context())
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	if ms == nil {
		ms = []api.ModelInfo{}
	}
	h.writeJSON(w, r, http.StatusOK, api.ModelsOut{Models: ms, ModelNames: h.Jobs.ModelNames()})
}

func (h *handler) handleModelActivate(w http.ResponseWriter, r *http.Request) {
	name := chi.URLParam(r, "name")
	if len(name) == 0 || len(name) > 64 {
		h.writeError(w, r, api.FieldError("name", "must be 1-64 bytes"))
		return
	}
	if err := h.Jobs.Activate(r.Context(), name); err != nil {
		h.writeError(w, r, err)
		return
	}
	ms, err := h.Models.Models(r.Context())
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	for _, m := range ms {
		if m.Name == name && m.Active {
			h.writeJSON(w, r, http.StatusOK, m)
			return
		}
	}
	h.writeError(w, r, api.Errorf(api.CodeInternal, "model %s activated but not listed", name))
}

func (h *handler) handleEvaluationList(w http.ResponseWriter, r *http.Request) {
	reps, err := h.Reports.Reports(r.Context())
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	out := api.ReportsOut{Evaluations: make([]api.ReportSummary, 0, len(reps))}
	for _, rep := range reps {
		s := api.ReportSummary{ID: rep.ID, CreatedAt: rep.CreatedAt, Kind: rep.Kind, Dataset: rep.Dataset,
			Protocol: rep.Protocol, Folds: rep.Folds, Models: []string{}}
		for _, row := range rep.Rows {
			name := row.Model + row.Method
			if row.Variant != "" {
				name = row.Variant
			}
			s.Models = append(s.Models, name)
		}
		out.Evaluations = append(out.Evaluations, s)
	}
	h.writeJSON(w, r, http.StatusOK, out)
}

func (h *handler) handleEvaluationGet(w http.ResponseWriter, r *http.Request) {
	id, err := jobID(r)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	rep, err := h.Reports.Report(r.Context(), id)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	h.writeJSON(w, r, http.StatusOK, rep)
}
