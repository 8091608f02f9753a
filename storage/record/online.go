package record

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/recsys-engine/recsys/api"
)

// The rules of online measurement (docs/design.md#online) both stores
// apply: which shown list a touch is credited to, what a credit changes,
// how shown lists are counted, and an experiment as stored.

// Attribution flags of one shown item.
const (
	AttrClick      byte = 1
	AttrConversion byte = 2
)

// OnlineDay is the counter day (YYYY-MM-DD, UTC) of an impression time.
func OnlineDay(t time.Time) string { return t.UTC().Format(time.DateOnly) }

// credit is the change one attribution makes to the flags of a shown
// item: the flags after it, and which kinds are new.
func credit(old byte, conversion bool) (flags byte, click, conv bool) {
	flags = old | AttrClick
	if conversion {
		flags |= AttrConversion
	}
	return flags, old&AttrClick == 0, conversion && old&AttrConversion == 0
}

// Credited is what crediting a touch to position pos of imp changes,
// given the shown item's flags so far (old): the new flags, the change of
// the counters (lists, impressions, clicks, conversions) and the credit;
// ok is false when it changes nothing.
func Credited(imp api.Impression, pos int, old byte, conversion bool) (flags byte, d [4]int64, a api.Attributed, ok bool) {
	flags, click, conv := credit(old, conversion)
	a = api.Attributed{RecommendationID: imp.ID, Position: pos, Model: imp.Model,
		Experiment: imp.Experiment, Arm: imp.Arm, Placement: imp.Placement, Click: click, Conversion: conv}
	return flags, [4]int64{0, 0, b2i(click), b2i(conv)}, a, click || conv
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// Matches reports the position of item in an impression that a touch may
// be credited to, or -1: the impression must be the touch's user's (an
// anonymous history's list, with no user, only by its recommendation id:
// the visitor may have signed in since), and without a recommendation id
// it must have been shown at most window before the touch (and not after
// it).
func Matches(imp api.Impression, t api.Touch, window time.Duration) int {
	anonymous := imp.UserID == "" && t.RecommendationID != ""
	if imp.UserID != t.UserID && !anonymous {
		return -1
	}
	if t.RecommendationID == "" && (imp.At.After(t.At) || t.At.Sub(imp.At) > window) {
		return -1
	}
	return slices.Index(imp.Items, t.ItemID)
}

// TallyShown sums the lists and items of impressions per counter row
// (day, model, experiment, arm, placement), in the order the rows first
// appear.
func TallyShown(imps []api.Impression) []api.OnlineCount {
	at := map[[5]string]int{}
	var out []api.OnlineCount
	for _, imp := range imps {
		k := [5]string{OnlineDay(imp.At), imp.Model, imp.Experiment, imp.Arm, imp.Placement}
		i, ok := at[k]
		if !ok {
			i = len(out)
			at[k] = i
			out = append(out, api.OnlineCount{Day: k[0], Model: k[1], Experiment: k[2], Arm: k[3], Placement: k[4]})
		}
		out[i].Lists++
		out[i].Impressions += int64(len(imp.Items))
	}
	return out
}

// RunningConflict is the error of starting an experiment while another
// runs.
func RunningConflict(id string) error {
	return api.Errorf(api.CodeConflict, "experiment %s is running: only one experiment may assign users at a time; stop it first (POST /admin/experiments/%s/stop)", id, id)
}

// experiment is an api.Experiment as stored.
type experiment struct {
	Name           string    `json:"name"`
	Arms           []api.Arm `json:"arms"`
	Alpha          float64   `json:"alpha"`
	MinImpressions int64     `json:"min_impressions"`
	Created        int64     `json:"created"`
	Stopped        int64     `json:"stopped,omitempty"`
}

// EncodeExperiment is the stored form of an experiment, the same in both
// stores (its id is the key).
func EncodeExperiment(e api.Experiment) ([]byte, error) {
	return json.Marshal(experiment{Name: e.Name, Arms: e.Arms, Alpha: e.Alpha, MinImpressions: e.MinImpressions,
		Created: UnixNano(e.CreatedAt), Stopped: UnixNano(e.StoppedAt)})
}

// DecodeExperiment reads EncodeExperiment's bytes of experiment id.
func DecodeExperiment(id string, v []byte) (api.Experiment, error) {
	var r experiment
	if err := json.Unmarshal(v, &r); err != nil {
		return api.Experiment{}, fmt.Errorf("experiment %q: %w", id, err)
	}
	return api.Experiment{ID: id, Name: r.Name, Arms: r.Arms, Alpha: r.Alpha, MinImpressions: r.MinImpressions,
		CreatedAt: FromNano(r.Created), StoppedAt: FromNano(r.Stopped)}, nil
}
