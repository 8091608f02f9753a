package client_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/api/client"
	"github.com/recsys-engine/recsys/handlers"
	"github.com/recsys-engine/recsys/jobs"
	"github.com/recsys-engine/recsys/recsys"
	"github.com/recsys-engine/recsys/recsys/online"
	"github.com/recsys-engine/recsys/recsys/serving"
	"github.com/recsys-engine/recsys/storage"
)

// The keys of the examples' server, at least 16 bytes as serve demands.
const (
	exampleAppKey   = "shop-app-key-0123456789"
	exampleAdminKey = "shop-admin-key-0123456789"
)

// shopEvents are the examples' history: a coffee shop's customers and
// what they bought, so that the answers the examples print mean something.
var shopEvents = map[string][]string{
	"alice": {"espresso-machine", "coffee-grinder", "milk-frother"},
	"bob":   {"espresso-machine", "coffee-grinder", "tamper", "milk-frother"},
	"carol": {"french-press", "coffee-grinder", "kettle"},
	"dave":  {"french-press", "kettle", "tea-infuser"},
	"erin":  {"espresso-machine", "tamper", "knock-box"},
	"frank": {"kettle", "tea-infuser", "teapot"},
	"grace": {"coffee-grinder", "milk-frother", "knock-box", "tamper"},
	"heidi": {"french-press", "coffee-grinder", "mug-set"},
	"ivan":  {"teapot", "tea-infuser", "mug-set"},
	"judy":  {"espresso-machine", "milk-frother", "mug-set"},
}

// TestMain serves the real API (handlers, engine, job scheduler and
// online measurement over a bbolt file in a temporary directory) on
// loopback, stores shopEvents, trains itemknn and ease, and hands the
// examples the server's address and keys the way a deployment would:
// RECSYS_URL, RECSYS_APP_KEY and RECSYS_ADMIN_KEY.
func TestMain(m *testing.M) {
	os.Exit(runWithServer(m))
}

func runWithServer(m *testing.M) int {
	dir, err := os.MkdirTemp("", "recsys-client-examples")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	url, stop, err := startServer(filepath.Join(dir, "recsys.db"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting the examples' server:", err)
		return 1
	}
	defer stop()
	if err := seedShop(url); err != nil {
		fmt.Fprintln(os.Stderr, "filling the examples' server:", err)
		return 1
	}
	os.Setenv("RECSYS_URL", url)
	os.Setenv("RECSYS_APP_KEY", exampleAppKey)
	os.Setenv("RECSYS_ADMIN_KEY", exampleAdminKey)
	return m.Run()
}

// startServer wires the service's parts as serve does, without the
// metrics, the dashboard and the replicas, and returns its URL and the
// function that stops it.
func startServer(db string) (string, func(), error) {
	st, err := storage.Open(db, storage.Options{Policy: api.DefaultPolicy()})
	if err != nil {
		return "", nil, err
	}
	eng := serving.NewEngine(st, serving.EngineOptions{})
	sched := jobs.NewScheduler(st, eng, jobs.Options{})
	if err := sched.Recover(context.Background()); err != nil {
		return "", nil, errors.Join(err, st.Close())
	}
	on := online.New(st, online.Options{Policy: st.Policy(), Loading: eng.Loading,
		Model: func(name string) (known, served bool) { return recsys.Recommends(name), eng.Serves(name) }})
	srv := httptest.NewServer(handlers.New(handlers.Deps{
		Interactions: st, Users: st, Items: st, Stats: st, Recommender: eng,
		Jobs: sched, JobRecords: st, Models: st, Reports: st, Online: on,
		Keys:   handlers.Keys{App: exampleAppKey, Admin: exampleAdminKey},
		Logger: slog.New(slog.DiscardHandler),
	}))
	ctx, cancel := context.WithCancel(context.Background())
	schedDone, onlineDone := make(chan struct{}), make(chan struct{})
	go func() { defer close(schedDone); sched.Run(ctx) }()
	on.Refresh(ctx)
	go func() { defer close(onlineDone); on.Run(ctx) }()
	stop := func() {
		srv.Close()
		cancel()
		<-schedDone
		<-onlineDone
		st.Close()
	}
	return srv.URL, stop, nil
}

// seedShop stores shopEvents, as purchases, and trains itemknn and ease,
// itemknn the default.
func seedShop(url string) error {
	ctx := context.Background()
	c := client.New(url, client.WithKey(exampleAdminKey))
	var evs []api.InteractionIn
	for user, items := range shopEvents {
		for _, item := range items {
			evs = append(evs, api.InteractionIn{UserID: user, ItemID: item, Type: "purchase"})
		}
	}
	if _, err := c.AddInteractions(ctx, evs); err != nil {
		return err
	}
	acc, err := c.Retrain(ctx, api.RetrainIn{Models: []string{"itemknn", "ease"}})
	if err != nil {
		return err
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		j, err := c.Job(ctx, acc.JobID)
		if err != nil {
			return err
		}
		if j.Done() {
			if j.State != api.JobSucceeded {
				return fmt.Errorf("training ended %s: %s", j.State, j.Error)
			}
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("training job %s still %s after a minute", j.ID, j.State)
		}
	}
	_, err = c.ActivateModel(ctx, "itemknn")
	return err
}
