package jobs

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/recsys/serving"
	"github.com/recsys-engine/recsys/storage"
)

// stubTrained is a trained record of the named model with validation ADG
// adg and serving cost c (nil: not measured), for chooseWithin, which
// reads nothing else.
func stubTrained(name string, adg float64, c *api.ServingCost) trained {
	return trained{served: &serving.Served{Info: api.ModelInfo{Name: name, Validation: map[string]float64{"adg": adg}, ServingCost: c}}}
}

// The choice keeps to the budget: the best validation ADG among the
// candidates within it, the others listed with by how much they are
// over; the cheapest when none is within; a cost not measured is within;
// the content metric is no candidate.
func TestChooseWithin(t *testing.T) {
	cost := func(mean, p99 float64) *api.ServingCost {
		return &api.ServingCost{MeanMS: mean, P50MS: mean, P99MS: p99, Requests: 1000}
	}
	budget := api.ServeBudget{MeanMS: 0.6, P99MS: 5}
	for _, tc := range []struct {
		name   string
		models []trained
		want   string
		over   []string
	}{
		{"the better ADG over the mean", []trained{stubTrained("popular", 0.1, cost(0.01, 0.1)), stubTrained("userknn", 0.5, cost(1.8, 4)), stubTrained("itemknn", 0.4, cost(0.2, 1))},
			"itemknn", []string{"userknn"}},
		{"the better ADG over the p99", []trained{stubTrained("itemknn", 0.4, cost(0.2, 1)), stubTrained("kunn", 0.5, cost(0.5, 9))},
			"itemknn", []string{"kunn"}},
		{"all within", []trained{stubTrained("itemknn", 0.4, cost(0.2, 1)), stubTrained("kunn", 0.5, cost(0.5, 4))},
			"kunn", nil},
		{"none within: the cheapest", []trained{stubTrained("kunn", 0.5, cost(3, 9)), stubTrained("userknn", 0.45, cost(1, 20)), stubTrained("febr", 0.6, cost(2, 6))},
			"userknn", []string{"kunn", "userknn", "febr"}},
		{"not measured is within", []trained{stubTrained("kunn", 0.5, cost(3, 9)), stubTrained("itemknn", 0.3, nil)},
			"itemknn", []string{"kunn"}},
		{"the content metric is no candidate", []trained{stubTrained("content", 0, nil), stubTrained("kunn", 0.5, cost(3, 9))},
			"kunn", []string{"kunn"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, over := chooseWithin(tc.models, budget)
			var names []string
			for _, o := range over {
				names = append(names, o.Model)
				if o.Factor <= 1 || o.Budget != "mean=0.6ms,p99=5ms" {
					t.Errorf("over-budget entry %+v", o)
				}
			}
			if got != tc.want || !slices.Equal(names, tc.over) {
				t.Fatalf("chose %q, over %v; want %q, over %v", got, names, tc.want, tc.over)
			}
		})
	}
	if got, over := chooseWithin([]trained{stubTrained("kunn", 0.5, cost(3, 9))}, api.ServeBudget{}); got != "kunn" || over != nil {
		t.Fatalf("no budget: chose %q, over %v", got, over)
	}
}

// budgetStore is a store of users in three tastes over 60 items, enough
// for a personalised model to beat popularity.
func budgetStore(t *testing.T) *storage.Store {
	t.Helper()
	st := mustStore(t)
	rng := rand.New(rand.NewPCG(5, 1))
	var evs []api.Interaction
	for u := range 90 {
		for range 10 {
			i := 20*(u%3) + rng.IntN(20)
			evs = append(evs, api.Interaction{UserID: fmt.Sprint("u", u), ItemID: fmt.Sprint("i", i), Type: "view"})
		}
	}
	if _, err := st.AddInteractions(context.Background(), evs); err != nil {
		t.Fatal(err)
	}
	return st
}

// trainJob runs one training job of models with auto set on st under
// budget b, and returns its record and the versions it stored.
func trainJob(t *testing.T, st *storage.Store, eng *serving.Engine, b api.ServeBudget, auto bool, models ...string) (api.Job, map[string]api.ModelInfo) {
	t.Helper()
	ctx := context.Background()
	opts := Options{Budget: b, Train: DefaultTrainOptions}
	opts.Train.Grid = []int{5, 10}
	s := NewScheduler(st, eng, opts)
	j, err := s.SubmitTrain(ctx, api.TrainRequest{Models: models, Auto: auto, Trigger: "cli"})
	if err != nil {
		t.Fatal(err)
	}
	s.RunQueued(ctx)
	if j, err = st.Job(ctx, j.ID); err != nil || j.State != api.JobSucceeded {
		t.Fatalf("job %+v (%v)", j, err)
	}
	infos, err := st.Models(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]api.ModelInfo{}
	for _, m := range infos {
		if m.JobID == j.ID {
			out[m.Name] = m
		}
	}
	return j, out
}

// A training job measures the serving cost of every recommender it fits
// and stores it with the version; within a budget no model reaches, the
// first training activates the best validation ADG and lists none over.
func TestTrain_servingCostStored(t *testing.T) {
	st := budgetStore(t)
	j, infos := trainJob(t, st, serving.NewEngine(st, serving.EngineOptions{}), api.ServeBudget{MeanMS: 3.6e6, P99MS: 3.6e6}, false, "popular", "itemknn")
	best, bestADG := "", -1.0
	for _, name := range []string{"popular", "itemknn"} {
		m := infos[name]
		c := m.ServingCost
		if c == nil || c.Requests < 1 || c.MeanMS <= 0 || c.P50MS > c.P99MS {
			t.Fatalf("%s stored serving cost %+v", name, c)
		}
		if m.Validation["adg"] > bestADG {
			best, bestADG = name, m.Validation["adg"]
		}
	}
	if j.Activated != best || len(j.OverBudget) != 0 {
		t.Fatalf("activated %q with %v over budget; want %s, the best validation ADG, and none over", j.Activated, j.OverBudget, best)
	}
}

// Under a budget so small that every real model is over it, an auto job
// activates the cheapest model as measured, whatever its validation ADG,
// and its record lists every candidate over, by how much; a model over
// the budget activated by hand is activated with a warning.
func TestTrain_overBudget(t *testing.T) {
	st := budgetStore(t)
	eng := serving.NewEngine(st, serving.EngineOptions{})
	tiny := api.ServeBudget{MeanMS: 1e-6, P99MS: 1e-6}
	j, infos := trainJob(t, st, eng, tiny, true, "popular", "itemknn", "userknn")
	cheapest := ""
	for _, name := range []string{"popular", "itemknn", "userknn"} {
		if c := infos[name].ServingCost; cheapest == "" || c.MeanMS < infos[cheapest].ServingCost.MeanMS {
			cheapest = name
		}
	}
	if j.Activated != cheapest {
		t.Fatalf("activated %q, want the cheapest, %s (%+v)", j.Activated, cheapest, infos)
	}
	if len(j.OverBudget) != 3 {
		t.Fatalf("over budget %+v, want the three candidates", j.OverBudget)
	}
	for _, o := range j.OverBudget {
		c := infos[o.Model].ServingCost
		if o.MeanMS != c.MeanMS || o.P99MS != c.P99MS || o.Budget != tiny.String() || o.Factor <= 1 {
			t.Errorf("over-budget entry %+v, measured %+v", o, c)
		}
	}
	if active, err := st.ActiveModel(context.Background()); err != nil || active != cheapest {
		t.Fatalf("stored active model %q (%v), want %s", active, err, cheapest)
	}

	// By hand: activated all the same, with the budget and the cost named.
	s := NewScheduler(st, eng, Options{Budget: tiny})
	other := "itemknn"
	if cheapest == other {
		other = "userknn"
	}
	warning, err := s.Activate(context.Background(), other)
	if err != nil || !strings.Contains(warning, other) || !strings.Contains(warning, tiny.String()) {
		t.Fatalf("activating %s over budget: warning %q, %v", other, warning, err)
	}
	if eng.Active().Info.Name != other {
		t.Fatalf("serving %s by default, want %s", eng.Active().Info.Name, other)
	}
	if warning, err := NewScheduler(st, eng, Options{}).Activate(context.Background(), cheapest); err != nil || warning != "" {
		t.Fatalf("activating without a budget: warning %q, %v", warning, err)
	}
}
