package main

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/recsys/serving"
	"github.com/recsys-engine/recsys/storage"
)

// heldStore holds back the blobs of one model until its context ends.
type heldStore struct {
	*storage.Store
	held string
}

func (h heldStore) ModelBlob(ctx context.Context, name, version string) ([]byte, error) {
	if name == h.held {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return h.Store.ModelBlob(ctx, name, version)
}

// With the stored active model damaged and another model still loading
// (ease: not one that similar items fall back to, which would load first),
// /readyz names both: the active model's failure and the model loading.
// Once the load ends with nothing to serve, it names the failure and the
// popularity fallback; with --allow-fallback it is ready.
func TestReadiness_activeDamagedWhileLoading(t *testing.T) {
	ctx := context.Background()
	st, err := storage.Open(filepath.Join(t.TempDir(), "r.db"), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, name := range []string{"userknn", "ease"} {
		v, err := st.NewModelVersion(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.PutModel(ctx, api.ModelInfo{Name: name, Version: v, TrainedAt: time.Now()}, []byte("damaged "+name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.SetActiveModel(ctx, "userknn"); err != nil {
		t.Fatal(err)
	}
	eng := serving.NewEngine(st, serving.EngineOptions{})
	loadCtx, stop := context.WithCancel(ctx)
	loadErrs := eng.LoadPersistedAsync(loadCtx, heldStore{Store: st, held: "ease"}, nil, func(error) {})
	if len(loadErrs) == 0 || !strings.Contains(errors.Join(loadErrs...).Error(), `the active model "userknn" could not be loaded`) {
		t.Fatalf("first load errors %v, want the active userknn's", loadErrs)
	}
	ready := readiness(eng, loadErrs, false, nil)
	var ae *api.Error
	if err := ready(ctx); !errors.As(err, &ae) || ae.Code != api.CodeModelNotReady || ae.RetryAfter != 1 ||
		!strings.Contains(ae.Message, "the persisted active model could not be loaded") || !strings.Contains(ae.Message, "userknn") ||
		!strings.Contains(ae.Message, "still loading (ease)") {
		t.Fatalf("readiness while ease loads: %v; want model_not_ready naming userknn's failure and ease loading", err)
	}
	stop()
	if err := eng.WaitLoaded(ctx); err != nil {
		t.Fatal(err)
	}
	if err := ready(ctx); !errors.As(err, &ae) || ae.Code != api.CodeModelNotReady ||
		!strings.Contains(ae.Message, "could not be loaded") || !strings.Contains(ae.Message, "popularity fallback") {
		t.Fatalf("readiness after the load: %v; want model_not_ready naming the failure and the fallback", err)
	}
	if err := readiness(eng, loadErrs, true, nil)(ctx); err != nil {
		t.Fatalf("readiness with --allow-fallback: %v", err)
	}
}
