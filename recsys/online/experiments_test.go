package online_test

import (
	"context"
	"errors"
	"testing"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/recsys/online"
	"github.com/recsys-engine/recsys/storage/storagetest"
)

// An arm whose model the server's start is still loading is refused with
// model_not_ready and Retry-After, not as untrained, and nothing starts;
// once the model is served the same experiment starts.
func TestCreateExperiment_armStillLoading(t *testing.T) {
	st := storagetest.Open(t)
	served := map[string]bool{"popular": true, "itemknn": true}
	loading := map[string]bool{"ease": true}
	s := online.New(st, online.Options{
		Model:   func(name string) (bool, bool) { return true, served[name] },
		Loading: func(name string) bool { return loading[name] },
	})
	ctx := context.Background()
	in := api.ExperimentIn{Name: "knn vs ease", Arms: []api.Arm{{Model: "itemknn", Share: 50}, {Model: "ease", Share: 50}}}
	_, err := s.CreateExperiment(ctx, in)
	var ae *api.Error
	if !errors.As(err, &ae) || ae.Code != api.CodeModelNotReady || ae.RetryAfter != 1 {
		t.Fatalf("an arm still loading: %v, want model_not_ready with Retry-After 1", err)
	}
	if exps, err := st.Experiments(ctx); err != nil || len(exps) != 0 {
		t.Fatalf("experiments stored after the refusal: %v, %v", exps, err)
	}
	in.Arms[1].Model = "slim" // neither served nor loading
	if _, err := s.CreateExperiment(ctx, in); api.ErrorCode(err) != api.CodeInvalid {
		t.Fatalf("an untrained arm: %v, want invalid", err)
	}
	in.Arms[1].Model = "ease"
	served["ease"], loading["ease"] = true, false
	if out, err := s.CreateExperiment(ctx, in); err != nil || out.State != "running" {
		t.Fatalf("once loaded: %+v, %v", out, err)
	}
}

// A running experiment's answers carry the warnings of its arms, in arm
// order; a stopped one's carry none.
func TestExperiment_armWarnings(t *testing.T) {
	st := storagetest.Open(t)
	s := online.New(st, online.Options{ArmWarning: func(model string) string {
		if model == "kunn" {
			return "kunn is over the serving budget"
		}
		return ""
	}})
	ctx := context.Background()
	in := api.ExperimentIn{Name: "knn vs kunn", Arms: []api.Arm{{Model: "itemknn", Share: 50}, {Model: "kunn", Share: 50}}}
	out, err := s.CreateExperiment(ctx, in)
	if err != nil || len(out.Warnings) != 1 || out.Warnings[0] != "kunn is over the serving budget" {
		t.Fatalf("created %+v (%v), want kunn's warning", out.Warnings, err)
	}
	if got, err := s.ExperimentReport(ctx, out.ID); err != nil || len(got.Warnings) != 1 {
		t.Fatalf("report warnings %q (%v), want kunn's", got.Warnings, err)
	}
	if got, err := s.StopExperiment(ctx, out.ID); err != nil || got.State != "stopped" || got.Warnings != nil {
		t.Fatalf("stopped: %+v (%v), want no warnings", got, err)
	}
}
