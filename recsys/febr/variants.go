package febr

import (
	"fmt"

	"github.com/recsys-engine/recsys/recsys"
)

// affSLIM names the fsSLIM item affinity of a FEBR variant (the others are
// recsys.SimCosine and recsys.SimKUNN).
const affSLIM = "slim"

// variant is one FEBR feature representation (dissertation §4.7.3):
// which sides the features come from and which affinity matrices they
// aggregate.
type variant struct {
	name     string // registry name
	label    string // report name
	item     bool   // FEBRi features: ActiveItems(u, i)
	user     bool   // FEBRu features: ActiveUsers(u, i)
	affinity string // recsys.SimCosine, recsys.SimKUNN or affSLIM
}

// variants are the variants of Table 4.3 in report order. SLIM learns
// an item affinity only, so it has FEBRi alone (§4.7.3).
var variants = []variant{
	{"febr-i-cosine", "FEBRi-cosine", true, false, recsys.SimCosine},
	{"febr-u-cosine", "FEBRu-cosine", false, true, recsys.SimCosine},
	{"febr-iu-cosine", "FEBRiu-cosine", true, true, recsys.SimCosine},
	{"febr-i-kunn", "FEBRi-kunn", true, false, recsys.SimKUNN},
	{"febr-u-kunn", "FEBRu-kunn", false, true, recsys.SimKUNN},
	{"febr-iu-kunn", "FEBRiu-kunn", true, true, recsys.SimKUNN},
	{"febr-i-slim", "FEBRi-slim", true, false, affSLIM},
}

// init registers FEBR's models after the built-in ones, in report order:
// febr, the seven variants, then febr-blend. The service trains febr by
// default and compares it and febr-blend in auto mode; the other variants
// (none above both febr and the blend on the data measured,
// docs/evaluation.md) are trained when named. On large data their grids
// stay fixed: each step past an end is a whole search.
func init() {
	v, _ := variantOf(Name)
	lambdas := recsys.Grid{Lambda: serviceLambdas}
	recsys.Register(Name, v.kind(recsys.Service{Default: true, Auto: true, FixedGridAtScale: true, Options: serviceOptions, Grid: lambdas,
		Cost: recsys.CostModel(variantTimes[Name], v.memory)}))
	for _, v := range variants {
		recsys.Register(v.name, v.kind(recsys.Service{FixedGridAtScale: true, Options: serviceOptions, Grid: lambdas,
			Cost: recsys.CostModel(variantTimes[v.name], v.memory)}))
	}
	recsys.Register(BlendName, recsys.Kind{New: func() recsys.Model { return &Blend{} }, Candidates: blendCandidates, Search: searchBlend,
		Reuses: DefaultBlendBases, Reuse: blendReuse, Service: recsys.Service{Auto: true, Options: serviceOptions, Cost: blendCost}})
}

// variantTimes are the variants' training times: power laws fitted
// (least squares of log seconds on log positives) to the tune + fit wall
// seconds at 1M, 5M and 20M positives on 27,000 items of
// docs/performance.md's "Auto mode at 1M, 5M and 20M" table, where each
// reused the job's fits of its baselines (and febr slim's): febr 32, 39,
// 57 s (with 32.0, 37.1, 57.9 s of "The default models at 1M, 5M and
// 20M"); febr-i-cosine 2, 6, 34; febr-u-cosine 14, 20, 41; febr-iu-cosine
// 36, 48, 73; febr-i-kunn 3, 80, 40; febr-u-kunn 22, 28, 48; febr-iu-kunn
// 48, 58, 82 s. febr-i-slim was not measured apart: febr's.
var variantTimes = map[string]recsys.TimeLaw{
	Name:             {At1M: 30.6, Exponent: 0.193},
	"febr-i-cosine":  {At1M: 1.76, Exponent: 0.939},
	"febr-u-cosine":  {At1M: 13.1, Exponent: 0.355},
	"febr-iu-cosine": {At1M: 35.0, Exponent: 0.234},
	"febr-i-kunn":    {At1M: 5.37, Exponent: 0.896},
	"febr-u-kunn":    {At1M: 20.8, Exponent: 0.257},
	"febr-iu-kunn":   {At1M: 46.6, Exponent: 0.177},
	"febr-i-slim":    {At1M: 30.6, Exponent: 0.193},
}

// memory is a variant's: the training memo (ServiceMemory) and the memo
// of validation blocks (validationMemo) at their bounds, and the
// affinity's neighbour lists at k_max, cached twice and in the model: an
// item side's as itemknn's, a user side's as userknn's (two lists a
// user). The job's fits of its baselines and of slim, which it reuses,
// are theirs.
func (v variant) memory(s recsys.Shape) (int64, string) {
	b := int64(ServiceMemory) + validationMemo
	var what []any
	if v.item {
		b += 4 * recsys.ListBytes(s.Items, s.K())
		what = append(what, recsys.FormatCount(int64(s.Items))+" items")
	}
	if v.user {
		b += 2 * recsys.ListBytes(s.Users, s.UserK())
		what = append(what, recsys.FormatCount(int64(s.Users))+" users")
	}
	if len(what) == 2 {
		return b, fmt.Sprintf("feature memos and neighbour lists of %s and %s × %d", append(what, max(s.K(), s.UserK()))...)
	}
	return b, fmt.Sprintf("feature memos and neighbour lists of %s × %d", append(what, max(s.K(), s.UserK()))...)
}

// kind is the registration of a variant: its search (search.go) tunes λ
// per k on features built once, and it reuses the job's fits of its
// aggsum baselines and, for the SLIM affinity, of slim.
func (v variant) kind(s recsys.Service) recsys.Kind {
	reuses := v.baselines()
	if v.affinity == affSLIM {
		reuses = append(reuses, "slim")
	}
	return recsys.Kind{New: func() recsys.Model { return &Model{v: v} }, Candidates: v.candidates, Search: v.search,
		Reuses: reuses, Reuse: v.reuse(), Service: s}
}

// Name is the registry name of the service's FEBR model: the FEBRi
// variant over the SLIM affinity, the best of Table 4.3.
const Name = "febr"

func variantOf(name string) (variant, bool) {
	if name == Name {
		v := variants[len(variants)-1]
		v.name = Name
		return v, true
	}
	for _, v := range variants {
		if v.name == name {
			return v, true
		}
	}
	return variant{}, false
}

// baseline is the registry name of the neighbourhood model that ranks as
// the variant's aggsum predictor (initialTheta), or "" (the two-sided
// variants z-score each side's aggsum apart; SLIM has Options.SLIM).
func (v variant) baseline() string {
	switch {
	case v.item && v.user:
		return ""
	case v.affinity == recsys.SimCosine && v.item:
		return "itemknn"
	case v.affinity == recsys.SimCosine:
		return "userknn"
	case v.affinity == recsys.SimKUNN && v.item:
		return "kunn-i"
	case v.affinity == recsys.SimKUNN:
		return "kunn-u"
	}
	return ""
}

// baselines are the neighbourhood models whose choices of k a KByBaseline
// search of v takes (Options.Baselines): a one-sided variant's
// baseline, or for FEBRiu the baselines of its two one-sided siblings
// (febr-iu-cosine itemknn and userknn, febr-iu-kunn kunn-i and kunn-u);
// none for FEBRi-slim, which takes slim's choice (Options.SLIM).
func (v variant) baselines() []string {
	if b := v.baseline(); b != "" {
		return []string{b}
	}
	if !v.item || !v.user || v.affinity == affSLIM {
		return nil
	}
	var out []string
	for _, side := range []variant{{item: true, affinity: v.affinity}, {user: true, affinity: v.affinity}} {
		out = append(out, side.baseline())
	}
	return out
}

// IsVariant reports whether a registry name is FEBR or one of its variants.
func IsVariant(name string) bool {
	_, ok := variantOf(name)
	return ok
}

// VariantInfo describes the representation of a FEBR registry name.
type VariantInfo struct {
	// Label is the report name, e.g. "FEBRi-slim".
	Label string
	// Item and User say which sides the features come from.
	Item, User bool
	// Affinity is "cosine", "kunn" or "slim".
	Affinity string
	// Baselines are the neighbourhood models whose choices
	// Options.Baselines may pass: for a one-sided variant the model
	// that ranks as its aggsum predictor, for FEBRiu those of its two
	// one-sided siblings, none for FEBRi-slim.
	Baselines []string
}

// VariantOf describes a FEBR registry name; ok is false for the
// other models.
func VariantOf(name string) (info VariantInfo, ok bool) {
	v, ok := variantOf(name)
	return VariantInfo{Label: v.label, Item: v.item, User: v.user, Affinity: v.affinity, Baselines: v.baselines()}, ok
}

// Variant is one report row a model name stands for: the registry name to
// fit and the label of the row.
type Variant struct {
	Name, Label string
}

// Variants returns the report rows of a model name: every FEBR variant for
// "febr", the variant itself for a FEBR variant name, and nil for the other
// models (one row under their own name).
func Variants(name string) []Variant {
	if name == Name {
		out := make([]Variant, len(variants))
		for k, v := range variants {
			out[k] = Variant{Name: v.name, Label: v.label}
		}
		return out
	}
	if v, ok := variantOf(name); ok {
		return []Variant{{Name: v.name, Label: v.label}}
	}
	return nil
}
