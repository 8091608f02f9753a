package online

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/recsys-engine/recsys/api"
)

// CreateExperiment validates and starts an experiment. Only one runs at a
// time: it claims every user who asks without naming a model, so a second
// one is refused (409) until the first is stopped (docs/design.md#online).
func (s *Service) CreateExperiment(ctx context.Context, in api.ExperimentIn) (api.ExperimentOut, error) {
	e, err := s.validate(in)
	if err != nil {
		return api.ExperimentOut{}, err
	}
	e.CreatedAt = s.opts.Now().UTC()
	if e, err = s.st.CreateExperiment(ctx, e); err != nil {
		return api.ExperimentOut{}, err
	}
	s.running.Store(&e)
	return s.report(ctx, e)
}

func (s *Service) validate(in api.ExperimentIn) (api.Experiment, error) {
	e := api.Experiment{Name: in.Name, Arms: in.Arms, Alpha: in.Alpha, MinImpressions: in.MinImpressions}
	if strings.TrimSpace(in.Name) == "" {
		return e, api.FieldError("name", "must not be empty")
	}
	if len(in.Arms) < 2 || len(in.Arms) > 10 {
		return e, api.FieldError("arms", fmt.Sprintf("must have 2 to 10 arms, got %d", len(in.Arms)))
	}
	sum := 0
	for k, a := range in.Arms {
		field := fmt.Sprintf("arms[%d]", k)
		known, served := s.opts.Model(a.Model)
		switch {
		case a.Model == "":
			return e, api.FieldError(field+".model", "must name a model")
		case !known:
			return e, api.FieldError(field+".model", fmt.Sprintf("unknown model %q", a.Model))
		case !served && s.opts.Loading != nil && s.opts.Loading(a.Model):
			return e, api.ModelLoading(a.Model)
		case !served:
			return e, api.FieldError(field+".model", fmt.Sprintf("model %q is not trained yet; POST /admin/retrain first", a.Model))
		case a.Share < 1 || a.Share > 99:
			return e, api.FieldError(field+".share", fmt.Sprintf("must be a percentage from 1 to 99, got %d", a.Share))
		}
		for j := range k {
			if in.Arms[j].Model == a.Model {
				return e, api.FieldError(field+".model", fmt.Sprintf("repeats arms[%d] (%q); name each model once", j, a.Model))
			}
		}
		sum += a.Share
	}
	if sum != 100 {
		return e, api.FieldError("arms", fmt.Sprintf("the shares must sum to 100, they sum to %d", sum))
	}
	if e.Alpha == 0 {
		e.Alpha = DefaultAlpha
	}
	if math.IsNaN(e.Alpha) || e.Alpha <= 0 || e.Alpha > 0.5 {
		return e, api.FieldError("alpha", "must be in (0, 0.5]")
	}
	if e.MinImpressions == 0 {
		e.MinImpressions = DefaultMinImpr
	}
	if e.MinImpressions < 1 || e.MinImpressions > 1e9 {
		return e, api.FieldError("min_impressions", "must be from 1 to 1,000,000,000")
	}
	return e, nil
}

// ExperimentReport is GET /admin/experiments/{id}.
func (s *Service) ExperimentReport(ctx context.Context, id string) (api.ExperimentOut, error) {
	if err := checkID(id); err != nil {
		return api.ExperimentOut{}, err
	}
	e, err := s.st.Experiment(ctx, id)
	if err != nil {
		return api.ExperimentOut{}, err
	}
	return s.report(ctx, e)
}

// Experiments lists every experiment with its report, newest first.
func (s *Service) Experiments(ctx context.Context) (api.ExperimentsOut, error) {
	exps, err := s.st.Experiments(ctx)
	out := api.ExperimentsOut{Experiments: []api.ExperimentOut{}}
	if err != nil {
		return out, err
	}
	for _, e := range exps {
		r, err := s.report(ctx, e)
		if err != nil {
			return out, err
		}
		out.Experiments = append(out.Experiments, r)
	}
	return out, nil
}

// StopExperiment stops an experiment: its users go back to the active
// model; its report stays.
func (s *Service) StopExperiment(ctx context.Context, id string) (api.ExperimentOut, error) {
	if err := checkID(id); err != nil {
		return api.ExperimentOut{}, err
	}
	e, err := s.st.StopExperiment(ctx, id, s.opts.Now())
	if err != nil {
		return api.ExperimentOut{}, err
	}
	if r := s.running.Load(); r != nil && r.ID == id {
		s.running.Store(nil)
	}
	return s.report(ctx, e)
}

func checkID(id string) error {
	if id == "" || len(id) > 64 || strings.ContainsFunc(id, func(c rune) bool { return c < '!' || c > '~' }) {
		return api.FieldError("id", "is not an experiment id")
	}
	return nil
}

// report adds the arms' counters and the test to an experiment, and to a
// running one the warnings of its arms (Options.ArmWarning). The lists
// answered so far are written first, so that a report counts them all.
func (s *Service) report(ctx context.Context, e api.Experiment) (api.ExperimentOut, error) {
	if err := s.Flush(ctx); err != nil {
		return api.ExperimentOut{}, err
	}
	out := api.ExperimentOut{ID: e.ID, Name: e.Name, State: "running", CreatedAt: e.CreatedAt, Alpha: e.Alpha,
		MinImpressions: e.MinImpressions, Arms: make([]api.ArmOut, len(e.Arms))}
	end := s.opts.Now()
	if !e.Running() {
		out.State, end = "stopped", e.StoppedAt
		out.StoppedAt = &e.StoppedAt
	} else if s.opts.ArmWarning != nil {
		for _, a := range e.Arms {
			if w := s.opts.ArmWarning(a.Model); w != "" {
				out.Warnings = append(out.Warnings, w)
			}
		}
	}
	// A list shown just before midnight may be counted on the next day.
	counts, err := s.st.OnlineCounts(ctx, e.CreatedAt.UTC().Format(time.DateOnly), end.UTC().Add(24*time.Hour).Format(time.DateOnly))
	if err != nil {
		return out, err
	}
	at := map[string]int{}
	for k, a := range e.Arms {
		out.Arms[k].Arm = a
		at[a.Model] = k
	}
	for _, c := range counts {
		k, ok := at[c.Arm]
		if c.Experiment != e.ID || !ok {
			continue
		}
		out.Arms[k].Add(c)
	}
	arms := make([]ArmCount, len(out.Arms))
	for k := range out.Arms {
		a := &out.Arms[k].Tally
		withRates(a)
		arms[k] = ArmCount{Impressions: a.Impressions, Clicks: a.Clicks}
	}
	win, test := Decide(arms, e.Alpha, e.MinImpressions)
	out.Test = test
	if win >= 0 {
		out.Winner = e.Arms[win].Model
	}
	return out, nil
}
