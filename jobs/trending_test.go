package jobs

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/recsys"
	"github.com/recsys-engine/recsys/storage/storagetest"
)

// The event times reach the time-aware models of a training job: events
// stored with their timestamps, a snapshot of the store, and the trending
// and latest fits score by the day each pair's first event fell on.
func TestTrain_timeAwareModelsReadEventDays(t *testing.T) {
	ctx := context.Background()
	st := storagetest.Open(t)
	start := time.Date(2026, 1, 1, 15, 0, 0, 0, time.UTC)
	// Six users; item "i<k>" is met on day 10·k (k = 0…5) by users 0…k,
	// so older items have more users. A repeat 30 days later moves nothing.
	var evs []api.Interaction
	for k := range 6 {
		for u := 0; u <= k; u++ {
			evs = append(evs, api.Interaction{UserID: fmt.Sprint("u", u), ItemID: fmt.Sprint("i", 5-k), Type: "view",
				Timestamp: start.AddDate(0, 0, 10*(5-k))})
		}
	}
	evs = append(evs, api.Interaction{UserID: "u5", ItemID: "i0", Type: "view", Timestamp: start.AddDate(0, 0, 80)})
	if _, err := st.AddInteractions(ctx, evs); err != nil {
		t.Fatal(err)
	}
	snap, err := st.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	models, err := trainModels(ctx, snap, []string{recsys.TrendingModel, recsys.LatestModel}, DefaultTrainOptions, func(string, float64) {})
	if err != nil {
		t.Fatal(err)
	}
	index := map[string]int{}
	for k, id := range snap.ItemIDs {
		index[id] = k
	}
	score := func(m recsys.Model) []float64 {
		s := make([]float64, len(snap.ItemIDs))
		m.Score(nil, s)
		return s
	}
	trend := models[0].served.Model.(recsys.Model)
	h := recsys.ParamsOf(trend)[recsys.HalfLifeKey]
	got := score(trend)
	for k := range 6 {
		// Item i<j>, j = 5−k, has k+1 users met on day 10·j; today is day 50.
		j := 5 - k
		want := float64(k+1) * math.Exp2(-float64(50-10*j)/h)
		if g := got[index[fmt.Sprint("i", j)]]; math.Abs(g-want) > 1e-9 {
			t.Errorf("half-life %v: trending score of i%d %v, want %v", h, j, g, want)
		}
	}
	got = score(models[1].served.Model.(recsys.Model))
	for j := range 6 {
		if g, want := got[index[fmt.Sprint("i", j)]], float64(1+10*j); g != want {
			t.Errorf("latest score of i%d %v, want %v", j, g, want)
		}
	}
}
