package eval

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/recsys"
	"github.com/recsys-engine/recsys/recsys/eval/table"
	"github.com/recsys-engine/recsys/recsys/febr"
)

// Options configure Run. Zero values take the defaults of docs/design.md#evaluation.
type Options struct {
	// Models to evaluate, by registry name; empty means recsys.Names().
	Models []string
	// Folds is the number of random splits (3; 1 under Time, which has a
	// single split; at most MaxFolds).
	Folds int
	// Protocol is Standard, Novelty, Users or Time.
	Protocol string
	// Seed seeds the splits: fold f uses the stream (Seed, f).
	Seed int64
	// Grid is the search space; empty fields take DefaultGrid's.
	Grid Grid
	// MinPositives is the smallest |O⁺u| that gets held-out items
	// (DefaultMinPositives).
	MinPositives int
	// DumpDir, when set, receives the files of docs/design.md#evaluation (--dump).
	DumpDir string
	// Progress, when not nil, is told after every fit.
	Progress recsys.ProgressFunc
	// ValidationUsers is the validation-user sample of every search
	// (Tuning.ValidationUsers: 0 is DefaultValidationUsers, negative all).
	ValidationUsers int
	// FEBR is the template of the FEBR fits (early stopping, learning
	// rate, memory budget); the search sets λ, the validation items and
	// the seed (FEBRSeed unless set).
	FEBR febr.Options
	// Extend is Tuning.Extend: the steps past each end of a grid
	// dimension the choice sits at (0: DefaultExtend, negative: none).
	Extend int
	// TimeBudget, when positive, is the time budget of each model's
	// search on each fold (Tuning.Deadline, counted from the search's
	// start): the grid points and extension steps predicted past it are
	// skipped, and the report row lists them (skipped_by_fold). A search
	// that others start from (a blend's bases) runs within the budget of
	// the row that makes it first. 0: none.
	TimeBudget time.Duration
}

// DefaultTimeBudget is the eval command's --time-budget, Options.TimeBudget
// of each model's search on each fold. On MovieLens 100K and Last.fm a
// fit takes seconds and a model's whole search on a fold, extension
// included, well under it (docs/evaluation.md), so it changes nothing
// there; on a sparse set of 17,000 items and 200,000 positives an
// extension of iALS to 400 and 800 factors is predicted at tens of
// minutes, which it leaves out, so that three models (a blend with its
// bases among them) finish in minutes rather than hours.
const DefaultTimeBudget = 5 * time.Minute

func (o Options) withDefaults() Options {
	if len(o.Models) == 0 {
		o.Models = recsys.Names()
	}
	if o.Protocol == "" {
		o.Protocol = Standard
	}
	if o.Folds <= 0 {
		o.Folds = 3
		if o.Protocol == Time {
			o.Folds = 1
		}
	}
	o.Grid = o.Grid.withDefaults()
	if o.MinPositives <= 0 {
		o.MinPositives = DefaultMinPositives
	}
	return o
}

// Run evaluates the models on the data set: for every fold it draws a
// split, searches each model's hyper-parameters on the validation set and
// measures the chosen model on the test set; the report gives the mean and
// standard error over folds of every measure (Table 4.3).
func Run(ctx context.Context, d *Dataset, opt Options) (*api.Report, error) {
	opt = opt.withDefaults()
	opt.Models = expandModels(opt.Models)
	if err := CheckProtocol(opt.Protocol, opt.Folds); err != nil {
		return nil, err
	}
	for _, name := range opt.Models {
		if _, err := recsys.New(name); err != nil {
			return nil, err
		}
	}
	start := time.Now()
	results := make([][]*foldResult, len(opt.Models))
	for f := range opt.Folds {
		s, err := NewSplit(d, opt.Protocol, opt.Seed, f, opt.MinPositives)
		if err != nil {
			return nil, err
		}
		cache := recsys.NewNeighbourCache(s.Train, slices.Max(opt.Grid.K))
		shared := newSharedSearches(opt.Models, s, cache)
		if opt.Protocol == Users {
			if shared.hold, err = newTrainHoldout(s.Train, opt.MinPositives, uint64(opt.Seed)+uint64(f)); err != nil {
				return nil, err
			}
		}
		caps, err := dataCaps(ctx, s.Train, cache)
		if err != nil {
			return nil, err
		}
		// planned[k] is model k's fits on the grid and its test: a grid
		// extension or a model's own search may fit more, and then the
		// total grows with them, so that done never passes it.
		planned := make([]int, len(opt.Models))
		total, done := 0, 0
		for k, name := range opt.Models {
			planned[k] = len(configs(name, opt.Grid, caps.Items, caps.Users)) + 1
			total += planned[k]
		}
		stage := fmt.Sprintf("fold %d/%d", f+1, opt.Folds)
		var dump *dumper
		if opt.DumpDir != "" {
			if dump, err = newDumper(opt.DumpDir, f, d, s); err != nil {
				return nil, err
			}
		}
		// later is the planned steps of the models after k: the refit
		// alone for one whose search another row made already.
		later := func(k int) int {
			n := 0
			for j, p := range planned[k+1:] {
				if shared.done[opt.Models[k+1+j]] != nil {
					p = 1
				}
				n += p
			}
			return n
		}
		for k, name := range opt.Models {
			report := func() {
				if opt.Progress != nil {
					opt.Progress(stage+" "+name, done, total)
				}
			}
			step := func() {
				done++
				total = max(total, done+later(k))
				report()
			}
			// The last step of a model, its test: what it fitted replaces
			// its plan (more with an extension, fewer with FEBR's own
			// search or a search another row made), so that the fold
			// ends at done = total.
			last := func() {
				done++
				total = done + later(k)
				report()
			}
			fo := opt.FEBR
			tuning := Tuning{Grid: opt.Grid.space(), Options: &fo, ValidationUsers: opt.ValidationUsers, SampleSeed: uint64(opt.Seed) + uint64(f), OnFit: step, Extend: opt.Extend, Nested: true}
			if opt.TimeBudget > 0 {
				tuning.Deadline = time.Now().Add(opt.TimeBudget)
			}
			res, err := search(ctx, name, s, shared, tuning, dump != nil, last)
			if err != nil {
				return nil, err
			}
			if dump != nil {
				if err := dump.model(fileName(name), res); err != nil {
					return nil, err
				}
				res.ranks, res.tops = nil, nil
			}
			results[k] = append(results[k], res)
		}
	}
	rep := &api.Report{
		CreatedAt: time.Now().UTC(),
		Kind:      "recommendation",
		Dataset:   d.Name,
		Protocol:  opt.Protocol,
		Folds:     opt.Folds,
		Seed:      opt.Seed,
		Seconds:   time.Since(start).Seconds(),
	}
	for k, name := range opt.Models {
		row := reportRow(name, results[k], opt.Protocol)
		labelRow(&row, name)
		rep.Rows = append(rep.Rows, row)
	}
	// With two models or more, the row of auto mode's choice among them
	// (docs/design.md#evaluation). Every row here has every fold and a
	// validation ADG in [0, 1], so AddAutoRow cannot refuse; were it to,
	// the report keeps its rows rather than being lost.
	if len(rep.Rows) >= 2 {
		_ = AddAutoRow(rep)
	}
	return rep, nil
}

// CheckProtocol reports an unknown protocol or more folds than it has.
func CheckProtocol(protocol string, folds int) error {
	if !slices.Contains(Protocols, protocol) {
		return fmt.Errorf("eval: unknown protocol %q (want %s)", protocol, strings.Join(Protocols, ", "))
	}
	if m := MaxFolds(protocol); m > 0 && folds > m {
		return fmt.Errorf("eval: the %s protocol has at most %d folds, not %d", protocol, m, folds)
	}
	return nil
}

// reportRow summarises a model over folds: mean and standard error of each
// measure, the mean training time, and the parameters chosen most often
// (all folds' choices are listed in the settings). Under the time
// protocol's one split the standard errors are over the test users
// instead.
func reportRow(name string, folds []*foldResult, protocol string) api.ReportRow {
	overUsers := protocol == Time
	row := api.ReportRow{
		Model:    name,
		Settings: map[string]string{"selection": selectionRule(protocol == Users)},
	}
	model, variant := rowName(name)
	for _, r := range folds {
		row.Folds = append(row.Folds, foldValues(displayName(api.ReportRow{Model: model, Variant: variant}), r, overUsers && len(folds) == 1))
	}
	row.Metrics = foldMetrics(row.Folds, overUsers)
	if overUsers && len(folds) == 1 {
		row.Settings["se"] = "over the test users (one split)"
	}
	var per, vals, tuning []string
	count := map[string]int{}
	bestKey := ""
	for _, r := range folds {
		row.TrainSeconds += r.trainSeconds / float64(len(folds))
		key := formatParams(r.params)
		per = append(per, key)
		vals = append(vals, formatADG(r.valADG))
		tuning = append(tuning, formatADG(r.tuningADG))
		count[key]++
		if bestKey == "" || count[key] > count[bestKey] {
			bestKey = key
		}
	}
	for _, r := range folds {
		if formatParams(r.params) == bestKey {
			row.Params = r.params
			if len(r.atEdge) > 0 {
				row.Settings["grid_edge"] = strings.Join(r.atEdge, " ")
			}
			break
		}
	}
	var ext, edges []string
	for _, r := range folds {
		ext = append(ext, orDash(strings.Join(r.extended, " ")))
		edges = append(edges, orDash(strings.Join(r.atEdge, " ")))
	}
	if strings.Join(ext, "") != strings.Repeat("-", len(ext)) {
		row.Settings["grid_extended_by_fold"] = strings.Join(ext, "; ")
	}
	if strings.Join(edges, "") != strings.Repeat("-", len(edges)) {
		row.Settings["grid_edge_by_fold"] = strings.Join(edges, "; ")
	}
	var skipped, points []string
	for _, r := range folds {
		skipped = append(skipped, orDash(strings.Join(r.skipped, "; ")))
		points = append(points, orDash(formatPoints(r.points)))
	}
	if strings.Join(skipped, "") != strings.Repeat("-", len(skipped)) {
		row.Settings["skipped_by_fold"] = strings.Join(skipped, " | ")
	}
	if strings.Join(points, "") != strings.Repeat("-", len(points)) {
		row.Settings["points_by_fold"] = strings.Join(points, "; ")
	}
	var trials []string
	for _, r := range folds {
		trials = append(trials, orDash(formatTrials(r.trials)))
	}
	if strings.Join(trials, "") != strings.Repeat("-", len(trials)) {
		row.Settings["blend_trials_by_fold"] = strings.Join(trials, " | ")
	}
	row.Settings["grid"] = folds[0].grid
	row.Settings["params_by_fold"] = strings.Join(per, "; ")
	row.Settings["validation_adg_by_fold"] = strings.Join(vals, "; ")
	row.Settings["tuning_adg_by_fold"] = strings.Join(tuning, "; ")
	return row
}

// selectionRule is the report's account of a row's validation ADG
// (Tuning.Nested, and trainHoldout under the users protocol).
func selectionRule(usersProtocol bool) string {
	if usersProtocol {
		return "validation adg on the half of the validation users the search did not see, pooled with held-out items of the training users (refitted without them)"
	}
	return "validation adg on the half of the validation users the search did not see"
}

// formatTrials renders a blend search's candidates, the learnt θ and
// every base alone, as "label held/cross/validation/pooled" ADGs
// (febr.BlendTrial); OPT-ADG's θ, which are no candidates, are left out.
func formatTrials(trials []febr.BlendTrial) string {
	var out []string
	for _, t := range trials {
		if t.PooledADG == 0 && t.ValidationADG == 0 {
			continue
		}
		out = append(out, fmt.Sprintf("%s %s/%s/%s/%s", t.Label, formatADG(t.HeldOutADG), formatADG(t.CrossFitADG), formatADG(t.ValidationADG), formatADG(t.PooledADG)))
	}
	return strings.Join(out, ", ")
}

// formatADG renders a validation ADG in the report's settings.
func formatADG(v float64) string { return strconv.FormatFloat(v, 'f', 4, 64) }

// meanSE is the mean and the standard error of the mean (sample standard
// deviation over √n; 0 for one value).
func meanSE(xs []float64) (float64, float64) {
	n := float64(len(xs))
	if n == 0 {
		return 0, 0
	}
	mean := 0.0
	for _, x := range xs {
		mean += x
	}
	mean /= n
	if n < 2 {
		return mean, 0
	}
	ss := 0.0
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss/(n-1)) / math.Sqrt(n)
}

// orDash is s, or "-" when it is empty.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// formatParams renders parameters as table.FormatParams does, "-" for none.
func formatParams(p map[string]float64) string {
	if s := table.FormatParams(p); s != "" {
		return s
	}
	return "-"
}
