package storagetest

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/recsys-engine/recsys/api"
)

// testOnline: impressions are counted once per list, a touch is credited
// to the list its recommendation id names or to the user's latest list
// showing the item within the window, each shown item at most once per
// kind, on the counters of the impression's day and arm.
func testOnline(t *testing.T, open Opener) {
	s := open(t, Options{})
	t0 := time.Date(2026, 3, 9, 23, 50, 0, 0, time.UTC)
	r1, r2, r3 := api.NewRecommendationID(t0, "t", 1), api.NewRecommendationID(t0.Add(time.Minute), "t", 2),
		api.NewRecommendationID(t0.Add(20*time.Minute), "t", 3)
	imps := []api.Impression{
		{ID: r1, UserID: "u1", Model: "itemknn", ModelVersion: "v000001", Items: []string{"i1", "i2", "i3"}, At: t0},
		{ID: r2, UserID: "u1", Model: "ease", ModelVersion: "v000002", Items: []string{"i2", "i4"}, At: t0.Add(time.Minute)},
		{ID: r3, UserID: "u2", Model: "itemknn", ModelVersion: "v000001", Experiment: "x000001", Arm: "itemknn",
			Items: []string{"i1"}, At: t0.Add(20 * time.Minute)}, // the next day
	}
	if err := s.PutImpressions(bg, imps); err != nil {
		t.Fatal(err)
	}
	if err := s.PutImpressions(bg, imps[:1]); err != nil { // a retried flush counts nothing twice
		t.Fatal(err)
	}
	const window = 30 * time.Minute
	at := t0.Add(2 * time.Minute)
	cases := []struct {
		name string
		t    api.Touch
		want []api.Attributed
	}{
		{"by id", api.Touch{RecommendationID: r1, UserID: "u1", ItemID: "i2", At: at},
			[]api.Attributed{{RecommendationID: r1, Position: 1, Model: "itemknn", Click: true}}},
		{"by id again", api.Touch{RecommendationID: r1, UserID: "u1", ItemID: "i2", At: at}, nil},
		{"by id, conversion", api.Touch{RecommendationID: r1, UserID: "u1", ItemID: "i2", At: at, Conversion: true},
			[]api.Attributed{{RecommendationID: r1, Position: 1, Model: "itemknn", Conversion: true}}},
		{"by id, long after", api.Touch{RecommendationID: r1, UserID: "u1", ItemID: "i3", At: t0.Add(48 * time.Hour)},
			[]api.Attributed{{RecommendationID: r1, Position: 2, Model: "itemknn", Click: true}}},
		{"by id, another user", api.Touch{RecommendationID: r1, UserID: "u2", ItemID: "i1", At: at}, nil},
		{"by id, not shown", api.Touch{RecommendationID: r1, UserID: "u1", ItemID: "i4", At: at}, nil},
		{"unknown id", api.Touch{RecommendationID: api.NewRecommendationID(t0, "t", 9), UserID: "u1", ItemID: "i1", At: at}, nil},
		{"window, latest list", api.Touch{UserID: "u1", ItemID: "i2", At: at},
			[]api.Attributed{{RecommendationID: r2, Position: 0, Model: "ease", Click: true}}},
		{"window, older list", api.Touch{UserID: "u1", ItemID: "i1", At: at, Conversion: true},
			[]api.Attributed{{RecommendationID: r1, Position: 0, Model: "itemknn", Click: true, Conversion: true}}},
		{"window passed", api.Touch{UserID: "u1", ItemID: "i4", At: t0.Add(time.Minute + window + time.Second)}, nil},
		{"before the list", api.Touch{UserID: "u2", ItemID: "i1", At: t0}, nil},
		{"window, experiment", api.Touch{UserID: "u2", ItemID: "i1", At: t0.Add(25 * time.Minute)},
			[]api.Attributed{{RecommendationID: r3, Model: "itemknn", Experiment: "x000001", Arm: "itemknn", Click: true}}},
		{"unknown user", api.Touch{UserID: "u9", ItemID: "i1", At: at}, nil},
		{"not an id", api.Touch{RecommendationID: "r1", UserID: "u1", ItemID: "i1", At: at}, nil},
	}
	for _, c := range cases {
		got, err := s.Attribute(bg, []api.Touch{c.t}, window)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if len(got) == 0 {
			got = nil
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: Attribute = %+v, want %+v", c.name, got, c.want)
		}
	}
	// Two touches of one batch on the same shown item count once.
	got, err := s.Attribute(bg, []api.Touch{{UserID: "u1", ItemID: "i4", At: at}, {RecommendationID: r2, UserID: "u1", ItemID: "i4", At: at}}, window)
	if err != nil || len(got) != 1 || got[0].RecommendationID != r2 || got[0].Position != 1 {
		t.Errorf("a batch touching one shown item twice: %+v, %v", got, err)
	}

	counts, err := s.OnlineCounts(bg, "2026-03-09", "2026-03-10")
	if err != nil {
		t.Fatal(err)
	}
	want := []api.OnlineCount{
		{Day: "2026-03-09", Model: "ease", Lists: 1, Impressions: 2, Clicks: 2},
		{Day: "2026-03-09", Model: "itemknn", Lists: 1, Impressions: 3, Clicks: 3, Conversions: 2},
		{Day: "2026-03-10", Model: "itemknn", Experiment: "x000001", Arm: "itemknn", Lists: 1, Impressions: 1, Clicks: 1},
	}
	if !reflect.DeepEqual(counts, want) {
		t.Errorf("OnlineCounts = %+v\nwant %+v", counts, want)
	}
	if counts, err := s.OnlineCounts(bg, "2026-03-10", "2026-03-31"); err != nil || !reflect.DeepEqual(counts, want[2:]) {
		t.Errorf("OnlineCounts from the 10th = %+v, %v; want %+v", counts, err, want[2:])
	}
	if counts, err := s.OnlineCounts(bg, "2026-03-01", "2026-03-08"); err != nil || len(counts) != 0 {
		t.Errorf("OnlineCounts before any = %+v, %v", counts, err)
	}
}

// testOnlinePrune: pruning deletes the oldest lists shown before a time,
// at most the limit in one call, and their credits, and leaves the
// counters, the newer lists and their credits as they were; a touch
// naming a deleted list, or falling in its window, is not credited.
func testOnlinePrune(t *testing.T, open Opener) {
	s := open(t, Options{})
	t0 := time.Date(2026, 3, 9, 12, 0, 0, 0, time.UTC)
	id := func(m int, seq uint64) string {
		return api.NewRecommendationID(t0.Add(time.Duration(m)*time.Minute), "p", seq)
	}
	r1, r2, r3, r4 := id(0, 1), id(1, 2), id(2, 3), id(10, 4)
	imps := []api.Impression{
		{ID: r1, UserID: "u1", Model: "itemknn", ModelVersion: "v1", Items: []string{"i1", "i2"}, At: t0},
		{ID: r2, UserID: "u1", Model: "itemknn", ModelVersion: "v1", Items: []string{"i3"}, At: t0.Add(time.Minute)},
		{ID: r3, UserID: "u2", Model: "itemknn", ModelVersion: "v1", Items: []string{"i1"}, At: t0.Add(2 * time.Minute)},
		{ID: r4, UserID: "u2", Model: "itemknn", ModelVersion: "v1", Items: []string{"i2"}, At: t0.Add(10 * time.Minute)},
	}
	if err := s.PutImpressions(bg, imps); err != nil {
		t.Fatal(err)
	}
	// The log is kept in the order of the ids' times: an id of another
	// form (upper-case hex here) is refused, and nothing of its batch kept.
	upper := strings.ToUpper(r4[:16]) + r4[16:]
	bad := []api.Impression{{ID: id(20, 5), UserID: "u3", Model: "itemknn", Items: []string{"i1"}, At: t0.Add(20 * time.Minute)},
		{ID: upper, UserID: "u3", Model: "itemknn", Items: []string{"i1"}, At: t0.Add(10 * time.Minute)}}
	if err := s.PutImpressions(bg, bad); err == nil || upper == r4 {
		t.Fatalf("PutImpressions(%q) = %v, want an error", upper, err)
	}
	const window = 30 * time.Minute
	at := t0.Add(11 * time.Minute)
	attribute := func(name string, tc api.Touch, want int) {
		t.Helper()
		got, err := s.Attribute(bg, []api.Touch{tc}, window)
		if err != nil || len(got) != want {
			t.Errorf("%s: Attribute = %+v, %v; want %d credit(s)", name, got, err, want)
		}
	}
	attribute("r1 before pruning", api.Touch{RecommendationID: r1, UserID: "u1", ItemID: "i2", At: at}, 1)
	attribute("r2 before pruning", api.Touch{RecommendationID: r2, UserID: "u1", ItemID: "i3", At: at}, 1)
	attribute("r3 before pruning", api.Touch{RecommendationID: r3, UserID: "u2", ItemID: "i1", At: at}, 1)
	before, err := s.OnlineCounts(bg, "2026-03-09", "2026-03-09")
	if err != nil || len(before) != 1 || before[0].Lists != 4 || before[0].Impressions != 5 || before[0].Clicks != 3 {
		t.Fatalf("counters before pruning: %+v, %v; want 4 lists, 5 impressions, 3 clicks", before, err)
	}

	cut := t0.Add(2 * time.Minute) // r3, shown at the cut, stays
	prune := func(limit, want int) {
		t.Helper()
		if n, err := s.PruneImpressions(bg, cut, limit); err != nil || n != want {
			t.Fatalf("PruneImpressions(limit %d) = %d, %v; want %d", limit, n, err, want)
		}
	}
	counters := func(name string, want []api.OnlineCount) []api.OnlineCount {
		t.Helper()
		got, err := s.OnlineCounts(bg, "2026-03-09", "2026-03-09")
		if err != nil || want != nil && !reflect.DeepEqual(got, want) {
			t.Errorf("counters %s: %+v, %v; want them unchanged, %+v", name, got, err, want)
		}
		return got
	}
	prune(0, 0)
	prune(1, 1) // r1
	counters("after pruning r1", before)
	// r2, before the cut but past the limit, kept its list and its credit.
	attribute("r2 kept by the limit, credited already", api.Touch{RecommendationID: r2, UserID: "u1", ItemID: "i3", At: at}, 0)
	// r1's credits went with it: the same list recorded again starts afresh.
	if err := s.PutImpressions(bg, imps[:1]); err != nil {
		t.Fatal(err)
	}
	attribute("r1 recorded again", api.Touch{RecommendationID: r1, UserID: "u1", ItemID: "i2", At: at}, 1)
	again := counters("after r1 again", nil)
	prune(10, 2) // r1 again and r2
	prune(10, 0)
	counters("after pruning r1 and r2", again)
	attribute("r1 pruned, by id", api.Touch{RecommendationID: r1, UserID: "u1", ItemID: "i1", At: at}, 0)
	attribute("r2 pruned, by window", api.Touch{UserID: "u1", ItemID: "i3", At: t0.Add(3 * time.Minute)}, 0)
	attribute("r3 kept, credited already", api.Touch{RecommendationID: r3, UserID: "u2", ItemID: "i1", At: at}, 0)
	attribute("r4 kept", api.Touch{RecommendationID: r4, UserID: "u2", ItemID: "i2", At: at}, 1)
}

// testExperiments: one experiment runs at a time; stopping it lets the
// next start; ids increase and the list is newest first.
func testExperiments(t *testing.T, open Opener) {
	s := open(t, Options{})
	created := time.Date(2026, 3, 9, 8, 0, 0, 0, time.UTC)
	in := api.Experiment{Name: "ease-vs-knn", Arms: []api.Arm{{Model: "ease", Share: 30}, {Model: "itemknn", Share: 70}},
		Alpha: 0.05, MinImpressions: 500, CreatedAt: created}
	e1, err := s.CreateExperiment(bg, in)
	if err != nil {
		t.Fatal(err)
	}
	want := in
	want.ID = "x000001"
	if !reflect.DeepEqual(e1, want) || !e1.Running() {
		t.Fatalf("CreateExperiment = %+v, want %+v", e1, want)
	}
	if got, err := s.Experiment(bg, "x000001"); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("Experiment = %+v, %v; want %+v", got, err, want)
	}
	if _, err := s.CreateExperiment(bg, in); api.ErrorCode(err) != api.CodeConflict {
		t.Fatalf("a second running experiment: err = %v, want a conflict", err)
	}
	if _, err := s.Experiment(bg, "x000009"); api.ErrorCode(err) != api.CodeNotFound {
		t.Fatalf("an unknown experiment: err = %v", err)
	}
	if _, err := s.StopExperiment(bg, "x000009", created); api.ErrorCode(err) != api.CodeNotFound {
		t.Fatalf("stopping an unknown experiment: err = %v", err)
	}
	stop := created.Add(time.Hour)
	got, err := s.StopExperiment(bg, "x000001", stop)
	want.StoppedAt = stop
	if err != nil || !reflect.DeepEqual(got, want) || got.Running() {
		t.Fatalf("StopExperiment = %+v, %v; want %+v", got, err, want)
	}
	if got, err := s.StopExperiment(bg, "x000001", stop.Add(time.Hour)); err != nil || !got.StoppedAt.Equal(stop) {
		t.Fatalf("stopping twice = %+v, %v; want the first stop kept", got, err)
	}
	e2, err := s.CreateExperiment(bg, in)
	if err != nil || e2.ID != "x000002" {
		t.Fatalf("after the stop: %+v, %v; want x000002", e2, err)
	}
	all, err := s.Experiments(bg)
	if err != nil || len(all) != 2 || all[0].ID != "x000002" || all[1].ID != "x000001" || !all[1].StoppedAt.Equal(stop) {
		t.Fatalf("Experiments = %+v, %v", all, err)
	}
}

// testOnlinePlacements: a list's placement is a key of its counters, and
// a touch credits the counters of the placement of the list it lands on;
// a list answered for none counts apart from every placement.
func testOnlinePlacements(t *testing.T, open Opener) {
	s := open(t, Options{})
	t0 := time.Date(2026, 4, 1, 10, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	id := func(m int) string { return api.NewRecommendationID(at(m), "q", uint64(m+1)) }
	imps := []api.Impression{
		{ID: id(0), UserID: "u1", Model: "itemknn", Items: []string{"i1", "i2", "i3"}, At: at(0), Placement: "home"},
		{ID: id(1), UserID: "u1", Model: "itemknn", Items: []string{"i2", "i4"}, At: at(1), Placement: "product"},
		{ID: id(2), UserID: "u2", Model: "itemknn", Items: []string{"i1", "i5"}, At: at(2)},
		{ID: id(3), UserID: "u2", Model: "ease", Items: []string{"i6"}, At: at(3), Placement: "home"},
		{ID: id(4), UserID: "u3", Model: "itemknn", Experiment: "x000001", Arm: "itemknn", Items: []string{"i1", "i2"}, At: at(4), Placement: "home"},
	}
	if err := s.PutImpressions(bg, imps); err != nil {
		t.Fatal(err)
	}
	touches := []struct {
		t    api.Touch
		want []api.Attributed
	}{
		{api.Touch{RecommendationID: id(0), UserID: "u1", ItemID: "i2", At: at(5)},
			[]api.Attributed{{RecommendationID: id(0), Position: 1, Model: "itemknn", Placement: "home", Click: true}}},
		// By window: u1's latest list showing i2 is the product one.
		{api.Touch{UserID: "u1", ItemID: "i2", At: at(5)},
			[]api.Attributed{{RecommendationID: id(1), Position: 0, Model: "itemknn", Placement: "product", Click: true}}},
		{api.Touch{RecommendationID: id(0), UserID: "u1", ItemID: "i1", At: at(5), Conversion: true},
			[]api.Attributed{{RecommendationID: id(0), Position: 0, Model: "itemknn", Placement: "home", Click: true, Conversion: true}}},
		{api.Touch{UserID: "u2", ItemID: "i1", At: at(5)},
			[]api.Attributed{{RecommendationID: id(2), Position: 0, Model: "itemknn", Click: true}}},
		{api.Touch{RecommendationID: id(2), UserID: "u2", ItemID: "i5", At: at(5)},
			[]api.Attributed{{RecommendationID: id(2), Position: 1, Model: "itemknn", Click: true}}},
		{api.Touch{RecommendationID: id(2), UserID: "u2", ItemID: "i5", At: at(6)}, nil}, // credited already
		{api.Touch{RecommendationID: id(3), UserID: "u2", ItemID: "i6", At: at(5), Conversion: true},
			[]api.Attributed{{RecommendationID: id(3), Model: "ease", Placement: "home", Click: true, Conversion: true}}},
		{api.Touch{RecommendationID: id(4), UserID: "u3", ItemID: "i2", At: at(5)},
			[]api.Attributed{{RecommendationID: id(4), Position: 1, Model: "itemknn", Experiment: "x000001", Arm: "itemknn", Placement: "home", Click: true}}},
	}
	for k, c := range touches {
		got, err := s.Attribute(bg, []api.Touch{c.t}, 30*time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) == 0 {
			got = nil
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("touch %d: Attribute = %+v, want %+v", k, got, c.want)
		}
	}
	// By hand: home's itemknn list showed 3 items, 2 clicked (i2, i1), one
	// bought (i1); the product list 2 shown, 1 clicked; the list without a
	// placement 2 shown, both clicked; ease's home list 1 shown, clicked
	// and bought; the experiment's home list 2 shown, 1 clicked.
	want := []api.OnlineCount{
		{Day: "2026-04-01", Model: "ease", Placement: "home", Lists: 1, Impressions: 1, Clicks: 1, Conversions: 1},
		{Day: "2026-04-01", Model: "itemknn", Lists: 1, Impressions: 2, Clicks: 2},
		{Day: "2026-04-01", Model: "itemknn", Placement: "home", Lists: 1, Impressions: 3, Clicks: 2, Conversions: 1},
		{Day: "2026-04-01", Model: "itemknn", Placement: "product", Lists: 1, Impressions: 2, Clicks: 1},
		{Day: "2026-04-01", Model: "itemknn", Experiment: "x000001", Arm: "itemknn", Placement: "home", Lists: 1, Impressions: 2, Clicks: 1},
	}
	counts, err := s.OnlineCounts(bg, "2026-04-01", "2026-04-01")
	if err != nil || !reflect.DeepEqual(counts, want) {
		t.Errorf("OnlineCounts = %+v, %v\nwant %+v", counts, err, want)
	}
	// A placement's totals over its rows: home 3 lists, 6 shown, 4 clicked.
	var home api.Tally
	for _, c := range counts {
		if c.Placement == "home" {
			home.Add(c)
		}
	}
	if home.Lists != 3 || home.Impressions != 6 || home.Clicks != 4 || home.Conversions != 2 {
		t.Errorf("home over its rows: %+v, want 3 lists, 6 impressions, 4 clicks, 2 conversions", home)
	}
}
