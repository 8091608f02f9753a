package main

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/recsys-engine/recsys/api"
)

// TestStart_persistedContentGraph: with more featured items than
// --content-approx-above, training builds the content model's HNSW graph
// and persists it with the model, and the next start serves it without
// building one (its log says so). After an item's features change the
// next start builds a graph instead, and says why.
func TestStart_persistedContentGraph(t *testing.T) {
	ctx := context.Background()
	db := t.TempDir() + "/graph.db"
	rng := rand.New(rand.NewPCG(3, 1))
	start := func() (*testApp, *syncBuffer) {
		logs := &syncBuffer{}
		a := startApp(t, func(c *Config) {
			c.DB = db
			c.ContentApproxAbove = 100
			c.Logger = slog.New(slog.NewTextHandler(logs, nil))
		})
		return a, logs
	}
	a, logs := start()
	// 240 items in 8 clusters of features; each user views items of one
	// cluster, so an item's collaborative neighbours share its features.
	var items []api.Item
	for i := range 240 {
		c := float64(i % 8)
		items = append(items, api.Item{ID: fmt.Sprintf("i%03d", i), Features: map[string]float64{
			"a": c + 0.2*rng.NormFloat64(), "b": 0.2 * rng.NormFloat64(), "c": float64(i%2) + 0.2*rng.NormFloat64()}})
	}
	if err := a.store.PutItems(ctx, items); err != nil {
		t.Fatal(err)
	}
	var evs []api.Interaction
	for u := range 160 {
		for range 12 {
			i := 8*rng.IntN(30) + u%8
			evs = append(evs, api.Interaction{UserID: fmt.Sprintf("u%d", u), ItemID: items[i].ID, Type: "view"})
		}
	}
	if _, err := a.store.AddInteractions(ctx, evs); err != nil {
		t.Fatal(err)
	}
	j, err := a.sched.SubmitTrain(ctx, api.TrainRequest{Models: []string{"itemknn", "content"}, Trigger: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if j = waitJob(t, a.getter(t), j.ID, 5*time.Minute, api.Job.Done); j.State != api.JobSucceeded {
		t.Fatalf("training job ended %s: %s", j.State, j.Error)
	}
	if len(j.Skipped) != 0 {
		t.Fatalf("models skipped: %+v", j.Skipped)
	}
	// The training's install served the graph it built.
	if l := logs.String(); !strings.Contains(l, "using the graph persisted with the model") {
		t.Fatalf("after training the server logged:\n%s", l)
	}
	a.stopNow(t)

	ready := func(a *testApp) {
		t.Helper()
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
			if st, _ := a.do(t, "GET", "/readyz", "", nil); st == 200 {
				return
			}
			if time.Now().After(deadline) {
				t.Fatal("not ready within a minute")
			}
		}
	}
	a, logs = start()
	ready(a)
	if l := logs.String(); !strings.Contains(l, "using the graph persisted with the model") || strings.Contains(l, "content graph: built") {
		t.Fatalf("the start after training logged:\n%s", l)
	}
	var sim struct {
		Items []struct {
			ItemID string `json:"item_id"`
		} `json:"items"`
	}
	if st := a.getJSON(t, "/items/i000/similar?by=content&n=5", &sim); st != 200 || len(sim.Items) != 5 {
		t.Fatalf("similar by content: %d %+v", st, sim)
	}
	changed := items[5]
	changed.Features = map[string]float64{"a": 20, "b": 0, "c": 0}
	if err := a.store.PutItems(ctx, []api.Item{changed}); err != nil {
		t.Fatal(err)
	}
	a.stopNow(t)

	a, logs = start()
	ready(a)
	if l := logs.String(); strings.Contains(l, "using the graph persisted") || !strings.Contains(l, "item features changed since training") {
		t.Fatalf("the start after a feature change logged:\n%s", l)
	}
}
