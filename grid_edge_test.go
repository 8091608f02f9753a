package main

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/jobs"
)

// TestRetrain_recordsGridEdge: a training job whose search chooses the top
// of a grid too short for the data (k ∈ {1, 2} for item KNN) extends it
// and says so in the job record and in the model's info.
func TestRetrain_recordsGridEdge(t *testing.T) {
	a := startApp(t, func(c *Config) {
		c.Jobs.Models = []string{"itemknn"}
		c.Jobs.Train = jobs.DefaultTrainOptions
		c.Jobs.Train.Grid = []int{1, 2}
	})
	a.load(t, clustered(120, 60, 12, 3, 5))
	status, body := a.do(t, http.MethodPost, "/admin/retrain", "application/json", []byte(`{"models":["itemknn"]}`))
	var acc api.JobAccepted
	if status != http.StatusAccepted || json.Unmarshal(body, &acc) != nil {
		t.Fatalf("answer %d %s, want 202", status, body)
	}
	j := waitJob(t, a.getter(t), acc.JobID, 2*time.Minute, api.Job.Done)
	if j.State != api.JobSucceeded || len(j.Grid) != 1 || j.Grid[0].Model != "itemknn" || !slices.Contains(j.Grid[0].Extended, "k=4") {
		t.Fatalf("job %+v, want itemknn's grid extended past k=2", j)
	}
	var models api.ModelsOut
	if status := a.getter(t)("/models", &models); status != http.StatusOK {
		t.Fatalf("GET /models: %d", status)
	}
	found := false
	for _, m := range models.Models {
		if m.Name != "itemknn" {
			continue
		}
		found = true
		if !slices.Equal(m.GridExtended, j.Grid[0].Extended) || !slices.Equal(m.GridEdge, j.Grid[0].Edge) {
			t.Errorf("model info %+v, job note %+v", m, j.Grid[0])
		}
	}
	if !found {
		t.Errorf("no itemknn among %+v", models.Models)
	}
}
