package main

import (
	"math"
	"net/http"
	"testing"
	"time"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/storage/postgres/pgtest"
)

// The first training of a fresh database activates the recommender with
// the best validation ADG, on both stores, and a restart serves the same
// one. On PostgreSQL the leader also follows its own writes (a model
// stored is announced to every replica, this one included), and the
// follower's install of the first model stored must not count as an
// active model when the job chooses one.
func TestFirstTraining_activatesTheBest(t *testing.T) {
	for _, store := range []string{"bolt", "postgres"} {
		t.Run(store, func(t *testing.T) {
			var db string
			if store == "postgres" {
				db = pgtest.Schema(t)
			}
			edit := func(c *Config) {
				if db != "" {
					c.DB = db
				}
				c.Jobs.NewEvents, c.Jobs.Interval = 0, 0
				c.AllowFallback = true
			}
			a := startApp(t, edit)
			if db == "" {
				db = a.cfg.DB
			}
			a.load(t, clustered(120, 60, 12, 4, 3))
			j := waitJob(t, a.getter(t), a.retrain(t, "popular", "itemknn", "kunn-i"), 2*time.Minute, api.Job.Done)
			if j.State != api.JobSucceeded {
				t.Fatalf("training job = %+v", j)
			}
			var ms api.ModelsOut
			if st := a.getJSON(t, "/models", &ms); st != http.StatusOK {
				t.Fatalf("GET /models = %d", st)
			}
			// Ties (itemknn and kunn-i can score alike here) may go
			// either way: the chosen one's ADG must be the best.
			bestADG, active := math.Inf(-1), api.ModelInfo{}
			for _, m := range ms.Models {
				bestADG = max(bestADG, m.Validation["adg"])
				if m.Active {
					active = m
				}
			}
			best := active.Name
			if j.Activated == "" || j.Activated != best || active.Validation["adg"] != bestADG {
				t.Fatalf("job activated %q, /models shows %q active (ADG %.4f); the best validation ADG is %.4f: %+v", j.Activated, best, active.Validation["adg"], bestADG, ms.Models)
			}
			if rec := a.recommend(t, "u1"); rec.Model != best || rec.Fallback != "" {
				t.Fatalf("answered by %q (fallback %q), want %q", rec.Model, rec.Fallback, best)
			}
			a.stopNow(t)
			b := startApp(t, edit)
			if rec := b.recommend(t, "u1"); rec.Model != best || rec.Fallback != "" {
				t.Fatalf("after a restart answered by %q (fallback %q), want %q", rec.Model, rec.Fallback, best)
			}
		})
	}
}
