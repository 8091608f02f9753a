package jobs

import (
	"context"
	"errors"
	"testing"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/recsys/serving"
	"github.com/recsys-engine/recsys/storage/storagetest"
)

// loadingEngine is a Serving whose one model is still loading after the
// start, and whose load ends (the model served) the moment Lookup is
// asked, as a load ending between two checks would.
type loadingEngine struct {
	loading   bool
	activated []string
}

func (e *loadingEngine) Install(*serving.Served, bool) {}
func (e *loadingEngine) Active() *serving.Served       { return nil }
func (e *loadingEngine) Loading(string) bool           { return e.loading }
func (e *loadingEngine) Lookup(string) *serving.Served {
	e.loading = false // the load ends here, served from now on
	return nil
}
func (e *loadingEngine) Activate(name string) error {
	e.activated = append(e.activated, name)
	return nil
}

// Activating a model the start is still loading is model_not_ready with
// Retry-After and changes nothing, in memory or in the store, even when
// the load ends between the scheduler's checks.
func TestScheduler_activateLoading(t *testing.T) {
	st := storagetest.Open(t)
	eng := &loadingEngine{loading: true}
	s := NewScheduler(st, eng, Options{})
	_, err := s.Activate(context.Background(), "itemknn")
	var ae *api.Error
	if !errors.As(err, &ae) || ae.Code != api.CodeModelNotReady || ae.RetryAfter != 1 {
		t.Fatalf("activating a loading model: %v, want model_not_ready with Retry-After 1", err)
	}
	if len(eng.activated) != 0 {
		t.Fatalf("the engine activated %v", eng.activated)
	}
	if active, err := st.ActiveModel(context.Background()); err != nil || active != "" {
		t.Fatalf("stored active model %q (%v), want none", active, err)
	}
}
