package jobs

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/recsys"
	"github.com/recsys-engine/recsys/recsys/serving"
)

// The auto set is the default models' recommenders with ease, rp3beta,
// wrmf, ials and febr-blend, febr-blend after its bases; the other FEBR
// variants, bpr and mfauc stay out.
func TestAutoModels_set(t *testing.T) {
	want := []string{"popular", "itemknn", "userknn", "kunn", "kunn-i", "kunn-u", "slim", "ease", "rp3beta", "febr", "wrmf", "ials", "febr-blend"}
	if !slices.Equal(AutoModels, want) {
		t.Fatalf("AutoModels %q, want %q", AutoModels, want)
	}
	for _, n := range []string{"febr-i-cosine", "febr-u-cosine", "febr-iu-cosine", "febr-i-kunn", "febr-u-kunn", "febr-iu-kunn", "febr-i-slim", "bpr", "mfauc"} {
		if k, err := recsys.KindOf(n); err != nil || k.Service.Auto {
			t.Errorf("%s: auto %v (%v), want a kind trained by name only", n, k.Service.Auto, err)
		}
	}
}

// An auto job that names no models fits the server's models, the content
// metric kept, and the auto kinds they lack, recorded as its additions.
func TestAutoJobModels(t *testing.T) {
	models, added := AutoJobModels(DefaultModels)
	want := []string{"popular", "itemknn", "userknn", "kunn", "kunn-i", "kunn-u", "slim", "febr", "content", "ease", "rp3beta", "wrmf", "ials", "febr-blend"}
	if !slices.Equal(models, want) || !slices.Equal(added, []string{"ease", "rp3beta", "wrmf", "ials", "febr-blend"}) {
		t.Fatalf("auto job on the default models: %q, added %q; want %q, added the last five", models, added, want)
	}
	// A server training febr-blend and content only: the blend's bases
	// come first, though --models names the blend first.
	models, added = AutoJobModels([]string{"febr-blend", "content"})
	want = []string{"popular", "kunn", "slim", "ease", "rp3beta", "wrmf", "ials", "febr-blend", "content", "itemknn", "userknn", "kunn-i", "kunn-u", "febr"}
	if !slices.Equal(models, want) || slices.Contains(added, "febr-blend") || slices.Contains(added, "content") || len(added) != 12 {
		t.Fatalf("auto job on febr-blend,content: %q, added %q; want %q and the twelve others added", models, added, want)
	}

	s := NewScheduler(mustStore(t), serving.NewEngine(nil, serving.EngineOptions{}), Options{})
	j, err := s.SubmitTrain(context.Background(), api.TrainRequest{Auto: true, Trigger: "interval"})
	if err != nil {
		t.Fatal(err)
	}
	if wantModels, wantAdded := AutoJobModels(DefaultModels); !slices.Equal(j.Models, wantModels) || !slices.Equal(j.Additions, wantAdded) {
		t.Fatalf("the trigger's auto job: models %q, additions %q", j.Models, j.Additions)
	}
}

// scale20M is the shape of docs/performance.md's 20M scale runs: 141,772
// users, 27,000 items.
var scale20M = recsys.Shape{Users: 141772, Items: 27000, Positives: 20_000_000, KMax: 200}

// The additions are fitted cheapest first by their predicted time, after
// the models the job names, each after the kinds it reuses.
func TestFitSequence_cheapestFirst(t *testing.T) {
	named := []string{"popular", "itemknn"}
	added := []string{"ease", "rp3beta", "wrmf", "ials", "febr-blend"}
	// At 20M: rp3beta 41.1·20^0.077 = 51.8 s, wrmf 10.5·20^0.541 = 53.1,
	// ials 10.5·20^0.634 = 70.2, ease 71.7·20^0.132 = 106.5, febr-blend
	// 84.3·20^0.330 = 226.5.
	if got, want := fitSequence(slices.Concat(named, added), added, scale20M), []string{"popular", "itemknn", "rp3beta", "wrmf", "ials", "ease", "febr-blend"}; !slices.Equal(got, want) {
		t.Errorf("at 20M: %q, want %q", got, want)
	}
	// At 1M: wrmf and ials 10.5 s (tied: the job's order), rp3beta 41.1,
	// ease 71.7, febr-blend 84.3.
	at1M := scale20M
	at1M.Positives = 1_000_000
	if got, want := fitSequence(slices.Concat(named, added), added, at1M), []string{"popular", "itemknn", "wrmf", "ials", "rp3beta", "ease", "febr-blend"}; !slices.Equal(got, want) {
		t.Errorf("at 1M: %q, want %q", got, want)
	}
	// A named kind keeps its place, whatever it costs.
	if got, want := fitSequence([]string{"ease", "popular", "wrmf"}, []string{"wrmf"}, scale20M), []string{"ease", "popular", "wrmf"}; !slices.Equal(got, want) {
		t.Errorf("ease named: %q, want %q", got, want)
	}
}

// The training budget's reasons, through the kinds' real cost functions:
// EASE at a million items is over 12 GiB whether named or added, and,
// memory unbounded, over the time left when it is an addition only.
func TestFitGuard_reasons(t *testing.T) {
	shape := recsys.Shape{Users: 141772, Items: 1_000_000, Positives: 20_000_000, KMax: 200}
	// Sparse EASE (1,000,000 items > the dense limit of 8,000): 2 cosine
	// caches + 4 λ × (rows, lists, ranked index) = 14 lists of 10⁶ × 200
	// entries of 16 bytes = 44,800,000,000 bytes, and the pair counter of
	// the 2,048 most popular items: 2048²·4 = 16,777,216 bytes of counts
	// and 2048 × ⌈141,772/64⌉ = 2,216 words of 8 bytes = 36,306,944 bytes
	// of user bits: 44,853,084,160 bytes = 41.77 GiB.
	c, ok := recsys.CostOf("ease", shape)
	if !ok || c.Bytes != 44_853_084_160 {
		t.Fatalf("ease at a million items: %d bytes (%v), want 44,853,084,160", c.Bytes, ok)
	}
	const gib12 = 12 << 30
	mem := fitGuard{budget: api.TrainBudget{Time: 30 * time.Minute, Memory: gib12}, shape: shape, added: []string{"ease", "wrmf"}}
	wantMem := "needs about 41.8 GiB at 141,772 users × 1,000,000 items (sparse weights of 1,000,000 items × 200 neighbours for each of 4 λ); the memory budget is 12 GiB (--train-memory)"
	for _, g := range []fitGuard{mem, {budget: mem.budget, shape: shape}} { // added, then named
		if got := g.reason("ease", 0, 0); got != wantMem {
			t.Errorf("ease (added %v): %q, want %q", g.added, got, wantMem)
		}
	}
	// wrmf: 3 × ((141,772 + 10⁶)·50·8 + 10⁶·8 + 141,772·24) = 1.3 GiB,
	// within; its time 10.5·20^0.541 = 53 s, within the 12 min left.
	if got := mem.reason("wrmf", 18*time.Minute, 0); got != "" {
		t.Errorf("wrmf: %q, want it fitted", got)
	}

	// Time: ease's 106.5 s at 20M on 27,000 items, times 10⁶/27,000
	// items = 3,943 s = 66 min, over the 12 min left of 30 min after 18.
	timed := fitGuard{budget: api.TrainBudget{Time: 30 * time.Minute}, shape: shape, added: []string{"ease"}}
	if c.Seconds < 3940 || c.Seconds > 3947 {
		t.Fatalf("ease's predicted time %.1f s, want 71.7·20^0.132·10⁶/27,000 = 3,943 s", c.Seconds)
	}
	wantTime := "predicted 66 min at 20,000,000 positives × 1,000,000 items exceeds the 12 min left of --train-budget 30m; raise --train-budget or name it in --models"
	if got := timed.reason("ease", 18*time.Minute, 0); got != wantTime {
		t.Errorf("ease added: %q, want %q", got, wantTime)
	}
	if got := timed.reason("ease", time.Hour, 0); !strings.Contains(got, "exceeds the 0 s left of --train-budget 30m") {
		t.Errorf("ease added, the budget spent: %q", got)
	}
	timed.added = nil
	if got := timed.reason("ease", time.Hour, 0); got != "" {
		t.Errorf("ease named, over the time: %q, want it fitted (the time applies to additions only)", got)
	}
	// The content metric has no time prediction: never skipped for time.
	timed.added = []string{"content"}
	if got := timed.reason("content", time.Hour, 0); got != "" {
		t.Errorf("content: %q, want it fitted", got)
	}
	if got := (fitGuard{shape: shape, added: []string{"ease"}}).reason("ease", time.Hour, 0); got != "" {
		t.Errorf("no budget: %q", got)
	}
}

// A job's guard counts the predicted time of each kind it admits as
// spent: at 20M positives × 27,000 items wrmf is predicted at 53.1 s
// and ials at 70.2 s (TestCosts_calibrated), so with a budget of 100 s
// the first is admitted at once and the second, asked straight after,
// has 100 − 53.1 = 46.9 s left and is skipped; a budget of 124 s admits
// both.
func TestFitGuard_checkCountsTheAdmitted(t *testing.T) {
	shape := recsys.Shape{Users: 141772, Items: 27000, Positives: 20_000_000, KMax: 200}
	for _, c := range []struct {
		budget time.Duration
		ials   bool
	}{{100 * time.Second, false}, {124 * time.Second, true}} {
		g := fitGuard{budget: api.TrainBudget{Time: c.budget}, shape: shape, added: []string{"wrmf", "ials"}}
		check := g.check(time.Now())
		if why := check("wrmf"); why != "" {
			t.Fatalf("budget %v: wrmf skipped: %s", c.budget, why)
		}
		why := check("ials")
		if (why == "") != c.ials {
			t.Fatalf("budget %v: ials reason %q, want fitted=%v", c.budget, why, c.ials)
		}
		if !c.ials && !strings.Contains(why, "exceeds the 47 s left of --train-budget 1m40s") {
			t.Fatalf("budget %v: %q, want the 47 s left", c.budget, why)
		}
	}
}

// The time laws reproduce the measurements they were fitted to: at 20M
// positives on 27,000 items each kind's prediction is within a factor of
// 2 of the auto run's wall seconds (docs/performance.md, "Auto mode at
// 1M, 5M and 20M"); no kind is predicted above 12 GiB there, where every
// kind ran; and the five additions to the default models are predicted
// at 509 s (51.8 + 53.1 + 70.2 + 106.5 + 226.5), within 30 minutes.
func TestCosts_calibrated(t *testing.T) {
	measured := map[string]float64{"popular": 1, "itemknn": 37, "userknn": 26, "kunn": 52, "kunn-i": 54, "kunn-u": 20, "slim": 40,
		"ease": 107, "rp3beta": 56, "febr": 57, "febr-i-cosine": 34, "febr-u-cosine": 41, "febr-iu-cosine": 73, "febr-i-kunn": 40,
		"febr-u-kunn": 48, "febr-iu-kunn": 82, "bpr": 112, "wrmf": 62, "ials": 82, "mfauc": 48, "febr-blend": 198}
	for _, n := range recsys.Kinds() {
		c, ok := recsys.CostOf(n, scale20M)
		if !ok {
			t.Errorf("%s has no cost", n)
			continue
		}
		if c.Bytes <= 0 || c.Bytes > 12<<30 || c.Memory == "" {
			t.Errorf("%s at 20M × 27,000: %d bytes (%q), want a prediction within 12 GiB", n, c.Bytes, c.Memory)
		}
		if m, ok := measured[n]; ok && (c.Seconds < m/2 || c.Seconds > 2*m) {
			t.Errorf("%s at 20M × 27,000: predicted %.1f s, measured %.0f s", n, c.Seconds, m)
		}
	}
	_, added := AutoJobModels(DefaultModels)
	total := 0.0
	for _, n := range added {
		c, _ := recsys.CostOf(n, scale20M)
		total += c.Seconds
	}
	if math.Abs(total-509) > 2 {
		t.Errorf("the additions at 20M: %.1f s predicted, want about 509", total)
	}
}

// budgetJob runs one training job on budgetStore's data under the
// training budget tb, the server's models base, and returns its record.
func budgetJob(t *testing.T, tb api.TrainBudget, req api.TrainRequest, base ...string) (api.Job, recsys.Shape) {
	t.Helper()
	ctx := context.Background()
	st := budgetStore(t)
	snap, err := st.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	x, err := snapshotMatrix(snap)
	if err != nil {
		t.Fatal(err)
	}
	shape := recsys.Shape{Users: x.Users(), Items: x.Items(), Positives: x.NNZ(), KMax: 10}
	opts := Options{Models: base, Train: DefaultTrainOptions}
	opts.Train.Grid = []int{5, 10}
	opts.Train.Budget = tb
	s := NewScheduler(st, serving.NewEngine(st, serving.EngineOptions{}), opts)
	j, err := s.SubmitTrain(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	s.RunQueued(ctx)
	if j, err = st.Job(ctx, j.ID); err != nil {
		t.Fatal(err)
	}
	return j, shape
}

func skippedNames(j api.Job) []string {
	var out []string
	for _, sk := range j.Skipped {
		out = append(out, sk.Model)
	}
	return out
}

// A budget of a nanosecond leaves every addition of an auto job behind,
// each with its prediction, and fits the server's models.
func TestTrain_timeBudgetSkipsAdditions(t *testing.T) {
	j, shape := budgetJob(t, api.TrainBudget{Time: time.Nanosecond}, api.TrainRequest{Auto: true, Trigger: "cli"}, "popular", "itemknn")
	_, added := AutoJobModels([]string{"popular", "itemknn"})
	if j.State != api.JobSucceeded || len(j.Versions) != 2 || !strings.HasPrefix(j.Versions[0], "popular@") || !strings.HasPrefix(j.Versions[1], "itemknn@") {
		t.Fatalf("job %+v, want popular and itemknn trained", j)
	}
	if got := skippedNames(j); !slices.Equal(got, fitSequence(added, added, shape)) {
		t.Errorf("skipped %q, want every addition %q, cheapest first", got, added)
	}
	// A kind that reuses one skipped before it (febr: slim; febr-blend:
	// its bases) is skipped for that, naming the first such kind.
	done := map[string]bool{}
	for _, sk := range j.Skipped {
		kind, _ := recsys.KindOf(sk.Model)
		first := ""
		for _, r := range kind.Reuses {
			if done[r] && first == "" {
				first = r
			}
		}
		done[sk.Model] = true
		if first != "" {
			if want := "it reuses " + first + ", which this job skipped, and would fit it itself"; sk.Reason != want {
				t.Errorf("%s skipped because %q, want %q", sk.Model, sk.Reason, want)
			}
			continue
		}
		if !strings.HasPrefix(sk.Reason, "predicted ") || !strings.Contains(sk.Reason, " items exceeds the 0 s left of --train-budget 1ns; raise --train-budget or name it in --models") {
			t.Errorf("%s skipped because %q", sk.Model, sk.Reason)
		}
	}
	if j.Activated == "" {
		t.Errorf("the auto job activated nothing")
	}
}

// A job's training budget bounds every search: past it, a named model is
// still fitted, on its grid's first point, and its record and the job's
// grid note list the points and extension steps left out, with the
// reasons.
func TestTrain_timeBudgetSkipsGridPoints(t *testing.T) {
	ctx := context.Background()
	st := budgetStore(t)
	opts := Options{Models: []string{"itemknn"}, Train: DefaultTrainOptions}
	opts.Train.Grid = []int{5, 10}
	opts.Train.Budget = api.TrainBudget{Time: time.Nanosecond}
	s := NewScheduler(st, serving.NewEngine(st, serving.EngineOptions{}), opts)
	j, err := s.SubmitTrain(ctx, api.TrainRequest{Trigger: "cli"})
	if err != nil {
		t.Fatal(err)
	}
	s.RunQueued(ctx)
	if j, err = st.Job(ctx, j.ID); err != nil || j.State != api.JobSucceeded || len(j.Versions) != 1 {
		t.Fatalf("job %+v (%v), want itemknn trained", j, err)
	}
	infos, err := st.Models(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var info api.ModelInfo
	for _, m := range infos {
		if m.JobID == j.ID && m.Name == "itemknn" {
			info = m
		}
	}
	// k = 5 is fitted; k = 10 is skipped, and so is the extension's step
	// below the choice at the grid's low end, k = 3 (5 ÷ 2, rounded).
	if info.Params["k"] != 5 || len(info.GridSkipped) != 2 || !strings.HasPrefix(info.GridSkipped[0], "k=10: predicted ") || !strings.HasPrefix(info.GridSkipped[1], "k=3: predicted ") {
		t.Fatalf("itemknn k = %v, grid_skipped %q; want k = 5, k=10 and k=3 skipped", info.Params["k"], info.GridSkipped)
	}
	for _, why := range info.GridSkipped {
		if !strings.HasSuffix(why, ", 0 s left of the budget") {
			t.Errorf("reason %q", why)
		}
	}
	if len(j.Grid) != 1 || j.Grid[0].Model != "itemknn" || !slices.Equal(j.Grid[0].Skipped, info.GridSkipped) || !slices.Equal(j.Grid[0].Edge, []string{"k=5"}) {
		t.Errorf("the job's grid notes %+v, want itemknn's skipped points and its edge k=5", j.Grid)
	}
}

// The memory guard holds for every model, named or not, the content
// metric too; a job whose every model is skipped succeeds saying so, and
// activates nothing.
func TestTrain_memoryGuard(t *testing.T) {
	// 91 users and 61 items (dense index 0 included), k_max 10: popular
	// 61·8 = 488 bytes; itemknn 3 lists of 61 × 10 entries of 16 bytes =
	// 29,280; content 61 × 10 × 16 = 9,760 (no features).
	j, _ := budgetJob(t, api.TrainBudget{Memory: 1000}, api.TrainRequest{Trigger: "cli"}, "popular", "itemknn", "content")
	if j.State != api.JobSucceeded || len(j.Versions) != 1 || !strings.HasPrefix(j.Versions[0], "popular@") {
		t.Fatalf("job %+v, want popular trained alone", j)
	}
	want := []api.SkippedModel{
		{Model: "itemknn", Reason: "needs about 28.6 KiB at 91 users × 61 items (neighbour lists of 61 items × 10, in the cache and two ranked indexes); the memory budget is 1000 B (--train-memory)"},
		{Model: "content", Reason: "needs about 9.5 KiB at 91 users × 61 items (the features and neighbour lists of 61 items); the memory budget is 1000 B (--train-memory)"},
	}
	if !slices.Equal(j.Skipped, want) {
		t.Errorf("skipped %+v, want %+v", j.Skipped, want)
	}

	j, _ = budgetJob(t, api.TrainBudget{Memory: 100}, api.TrainRequest{Trigger: "cli"}, "popular")
	if j.State != api.JobSucceeded || len(j.Versions) != 0 || j.Activated != "" || !slices.Equal(skippedNames(j), []string{"popular"}) ||
		!strings.HasPrefix(j.Skipped[0].Reason, "needs about 488 B at 91 users × 61 items (one count per item)") {
		t.Fatalf("every model skipped: %+v, want a succeeded job with no version and popular's reason", j)
	}
}

// The memory budget bounds k's extension: at 141,772 users × 1,000,000
// items kunn's predicted memory is its item lists (4 × 10⁶·k·16 bytes)
// and user lists (2 × 141,772·k·16) = 68,536,704·k bytes: 13.7 GB at
// k = 200, 27.4 GB at 400. A 16 GiB budget (17,179,869,184 bytes) admits
// 200 and not 400; 64 GiB admits 800 (54.8 GB) and not 1,600. At 27,000
// items the data caps the item lists at k = 26,999 but not the users',
// so the bound stays. No budget, no bound.
func TestMemoryMaxK(t *testing.T) {
	wide := recsys.Shape{Users: 141772, Items: 1_000_000, Positives: 20_000_000, KMax: 200}
	for _, c := range []struct {
		limit int64
		want  int
	}{{16 << 30, 200}, {64 << 30, 800}, {0, 0}} {
		if got := memoryMaxK("kunn", c.limit, wide); got != c.want {
			t.Errorf("kunn at a million items, budget %d: max k %d, want %d", c.limit, got, c.want)
		}
	}
	tiny := recsys.Shape{Users: 50, Items: 40, Positives: 500, KMax: 200}
	if got := memoryMaxK("kunn", 1<<30, tiny); got != 0 {
		t.Errorf("k capped by 40 items and 50 users: max k %d, want 0 (no bound)", got)
	}
}

// At 20M positives × 1,000,000 items a job admits itemknn, whose peak is
// its lists at k = 200 three times (3 · 10⁶ · 200 · 16 = 9,600,000,000
// bytes, 8.9 GiB) within a 12 GiB budget, and then skips kunn-i: its own
// 9.6 GB beside the 10⁶ · 200 · (2 · 16 + 12) = 8,800,000,000 bytes
// (8.2 GiB) that itemknn's served lists, ranked index and persisted
// bytes keep. wrmf, which keeps nothing counted, is still fitted.
func TestFitGuard_checkCountsWhatFittedKindsKeep(t *testing.T) {
	shape := recsys.Shape{Users: 404398, Items: 1_000_000, Positives: 20_000_000, KMax: 200}
	c, _ := recsys.CostOf("itemknn", shape)
	if c.Bytes != 9_600_000_000 || c.Kept != 8_800_000_000 {
		t.Fatalf("itemknn at a million items: peak %d, kept %d bytes; want 9,600,000,000 and 8,800,000,000", c.Bytes, c.Kept)
	}
	g := fitGuard{budget: api.TrainBudget{Memory: 12 << 30}, shape: shape}
	check := g.check(time.Now())
	if why := check("itemknn"); why != "" {
		t.Fatalf("itemknn skipped: %s", why)
	}
	want := "needs about 8.9 GiB at 404,398 users × 1,000,000 items (neighbour lists of 1,000,000 items × 200, in the cache and two ranked indexes) beside the 8.2 GiB the kinds fitted before it keep; the memory budget is 12 GiB (--train-memory)"
	if why := check("kunn-i"); why != want {
		t.Errorf("kunn-i after itemknn: %q, want %q", why, want)
	}
	if why := check("wrmf"); why != "" {
		t.Errorf("wrmf after itemknn: %q, want it fitted", why)
	}
	// Alone, kunn-i fits the same budget.
	if why := g.check(time.Now())("kunn-i"); why != "" {
		t.Errorf("kunn-i alone: %q, want it fitted", why)
	}
}
