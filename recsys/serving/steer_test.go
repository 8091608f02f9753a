package serving

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/recsys-engine/recsys/api"
)

// steerFixture is a store whose items a..e have popularity 5..1 and
// labels code 1..5 but "x" for c, and an engine on it with a clock the
// test sets; no model is trained, so popularity answers.
func steerFixture(t *testing.T) (*Engine, *time.Time) {
	t.Helper()
	st := mustStore(t)
	for k, id := range []string{"a", "b", "c", "d", "e"} {
		for u := range 5 - k {
			add(t, st, string(rune('p'+u)), "view", id)
		}
	}
	var items []api.Item
	for k, id := range []string{"a", "b", "c", "d", "e"} {
		code := string(rune('1' + k))
		if id == "c" {
			code = "x"
		}
		items = append(items, api.Item{ID: id, Categories: []string{"k" + string(rune('0'+k%2))},
			Labels: map[string]string{"code": code}, Features: map[string]float64{"price": float64(10 * (k + 1))}})
	}
	if err := st.PutItems(context.Background(), items); err != nil {
		t.Fatal(err)
	}
	clock := time.Now()
	e := NewEngine(st, EngineOptions{Now: func() time.Time { return clock }})
	return e, &clock
}

func recIDs(t *testing.T, e *Engine, req api.RecommendRequest) []string {
	t.Helper()
	if req.N == 0 {
		req.N = 10
	}
	req.UserID = "nobody"
	out, err := e.Recommend(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, it := range out.Items {
		ids = append(ids, it.ItemID)
	}
	return ids
}

func TestEngine_campaignStartsAndEnds(t *testing.T) {
	e, clock := steerFixture(t)
	start := clock.Add(time.Hour)
	if err := e.SetSteering([]api.Rule{{Name: "pin-e", Condition: `id == "e"`, Action: api.ActionPin, Position: 1,
		StartsAt: start, EndsAt: start.Add(time.Hour)}}, nil); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		at   time.Time
		want []string
	}{
		{start.Add(-time.Nanosecond), []string{"a", "b", "c", "d", "e"}},
		{start, []string{"e", "a", "b", "c", "d"}},
		{start.Add(59 * time.Minute), []string{"e", "a", "b", "c", "d"}},
		{start.Add(time.Hour), []string{"a", "b", "c", "d", "e"}},
	} {
		*clock = tt.at
		if got := recIDs(t, e, api.RecommendRequest{}); !slices.Equal(got, tt.want) {
			t.Errorf("at start%+v: %v, want %v", tt.at.Sub(start), got, tt.want)
		}
	}
}

func TestEngine_rulesAndFilters(t *testing.T) {
	e, clock := steerFixture(t)
	err := e.SetSteering([]api.Rule{
		{Name: "boost-d", Condition: `id == "d"`, Action: api.ActionBoost, Factor: 2.5}, // 2 → 5, ties a and stays after it
		{Name: "home-bury", Condition: `"k0" in categories`, Action: api.ActionBury, Placements: []string{"home"}},
		{Name: "broken", Condition: `1 +`, Action: api.ActionExclude},
	}, []api.Placement{{Name: "home"}})
	if err == nil || !strings.Contains(err.Error(), `rule "broken"`) {
		t.Errorf("SetSteering = %v, want the broken rule named", err)
	}
	out, err := e.Recommend(context.Background(), api.RecommendRequest{UserID: "nobody", N: 10, Explain: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []api.ScoredItem{{ItemID: "a", Score: 5}, {ItemID: "d", Score: 5, Rules: []string{"boost-d"}},
		{ItemID: "b", Score: 4}, {ItemID: "c", Score: 3}, {ItemID: "e", Score: 1}}
	if len(out.Items) != len(want) {
		t.Fatalf("got %+v, want %+v", out.Items, want)
	}
	for k := range want {
		if g := out.Items[k]; g.ItemID != want[k].ItemID || g.Score != want[k].Score || !slices.Equal(g.Rules, want[k].Rules) {
			t.Errorf("item %d = %+v, want %+v", k, g, want[k])
		}
	}
	// Pages of the steered list.
	if got := recIDs(t, e, api.RecommendRequest{N: 2, Offset: 1}); !slices.Equal(got, []string{"d", "b"}) {
		t.Errorf("page 2: %v", got)
	}
	// home: a, c and e are k0 and go last.
	if got := recIDs(t, e, api.RecommendRequest{Steer: api.Steering{Placement: "home"}}); !slices.Equal(got, []string{"d", "b", "a", "c", "e"}) {
		t.Errorf("home: %v", got)
	}
	if _, err := e.Recommend(context.Background(), api.RecommendRequest{UserID: "nobody", N: 1, Steer: api.Steering{Placement: "nope"}}); api.ErrorCode(err) != api.CodeNotFound {
		t.Errorf("unknown placement: %v", err)
	}

	// Filters: ANDed; a run-time failure leaves out that item alone.
	if got := recIDs(t, e, api.RecommendRequest{Steer: api.Steering{Filters: []string{`features.price >= 20`, `features.price < 50`}}}); !slices.Equal(got, []string{"d", "b", "c"}) {
		t.Errorf("two filters: %v", got)
	}
	before := counterValue(t, e)
	if got := recIDs(t, e, api.RecommendRequest{Steer: api.Steering{Filters: []string{`int(labels.code) > 0`}}}); !slices.Equal(got, []string{"a", "d", "b", "e"}) {
		t.Errorf("run-time error: %v", got)
	}
	if got := counterValue(t, e) - before; got != 1 {
		t.Errorf("filter errors counted %v, want 1", got)
	}
	_, err = e.Recommend(context.Background(), api.RecommendRequest{UserID: "nobody", N: 1, Steer: api.Steering{Filters: []string{"features.price <"}}})
	if api.ErrorCode(err) != api.CodeInvalid || !strings.Contains(err.Error(), "line 1, column 16") {
		t.Errorf("syntax error: %v", err)
	}

	// age_days counts from the item's entry into the catalogue.
	*clock = time.Now().Add(36 * time.Hour)
	if got := recIDs(t, e, api.RecommendRequest{Steer: api.Steering{Filters: []string{`age_days > 1.4 and age_days < 1.6`}}}); len(got) != 5 {
		t.Errorf("age 1.5 days: %v", got)
	}
	if got := recIDs(t, e, api.RecommendRequest{Steer: api.Steering{Filters: []string{`age_days < 1`}}}); len(got) != 0 {
		t.Errorf("age under a day: %v", got)
	}
}

func counterValue(t *testing.T, e *Engine) float64 {
	t.Helper()
	var m dto.Metric
	if err := e.filterErrors.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

// A filter's outcomes are remembered per version of the items: asked
// again it answers the same and counts its failures again, and a changed
// item is evaluated afresh.
func TestEngine_rememberedOutcomesFollowTheItems(t *testing.T) {
	e, _ := steerFixture(t)
	notX := api.RecommendRequest{Steer: api.Steering{Filters: []string{`labels.code != "x"`}}}
	for round := range 2 {
		if got := recIDs(t, e, notX); !slices.Equal(got, []string{"a", "b", "d", "e"}) {
			t.Errorf("round %d: %v, want c left out", round, got)
		}
	}
	failing := api.RecommendRequest{Steer: api.Steering{Filters: []string{`int(labels.code) > 0`}}}
	before := counterValue(t, e)
	for range 2 {
		recIDs(t, e, failing)
	}
	if got := counterValue(t, e) - before; got != 2 {
		t.Errorf("failures counted %v over two requests, want 2 (once each, remembered or not)", got)
	}
	src := e.src.(interface {
		PutItems(context.Context, []api.Item) error
	})
	if err := src.PutItems(context.Background(), []api.Item{{ID: "c", Categories: []string{"k0"}, Labels: map[string]string{"code": "3"}}}); err != nil {
		t.Fatal(err)
	}
	if got := recIDs(t, e, notX); !slices.Equal(got, []string{"a", "b", "c", "d", "e"}) {
		t.Errorf("after c's code changed: %v, want c back", got)
	}
	if got := recIDs(t, e, failing); !slices.Equal(got, []string{"a", "b", "c", "d", "e"}) {
		t.Errorf("after c's code became a number: %v", got)
	}
}

// heldReader answers rules, then waits in Placements until released; it
// says on reading when it was asked for its rules.
type heldReader struct {
	rules   []api.Rule
	reading chan struct{}
	release chan struct{}
}

func (r heldReader) Rules(context.Context) ([]api.Rule, error) {
	close(r.reading)
	return r.rules, nil
}

func (r heldReader) Placements(context.Context) ([]api.Placement, error) {
	if r.release != nil {
		<-r.release
	}
	return nil, nil
}

// A load that read the rules before a write committed (a replica's
// notification) must not store after the writer's own load: loads run one
// at a time, so the one that read last stores last.
func TestEngine_loadSteeringStoresTheLastRead(t *testing.T) {
	e, _ := steerFixture(t)
	stale := heldReader{reading: make(chan struct{}), release: make(chan struct{})}
	fresh := heldReader{rules: []api.Rule{{Name: "no-a", Condition: `id == "a"`, Action: api.ActionExclude}},
		reading: make(chan struct{})}
	staleDone, freshDone := make(chan error, 1), make(chan error, 1)
	go func() { staleDone <- e.LoadSteering(context.Background(), stale) }()
	<-stale.reading
	go func() { freshDone <- e.LoadSteering(context.Background(), fresh) }()
	// Unserialised, the fresh load reads and stores now, before the stale
	// one is released; serialised, it waits, and the timer releases it.
	select {
	case <-fresh.reading:
		<-time.After(50 * time.Millisecond)
	case <-time.After(200 * time.Millisecond):
	}
	close(stale.release)
	if err := errors.Join(<-staleDone, <-freshDone); err != nil {
		t.Fatal(err)
	}
	if got := recIDs(t, e, api.RecommendRequest{}); slices.Contains(got, "a") {
		t.Errorf("after the fresh load %v, want no a: the stale load stored last", got)
	}
}
