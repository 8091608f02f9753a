package eval

import (
	"maps"
	"math"
	"slices"
	"strconv"

	"github.com/recsys-engine/recsys/recsys"
)

// DefaultExtend is how many times Tune extends a grid dimension past each
// of its ends when the choice sits there (Tuning.Extend).
const DefaultExtend = 2

// dimension is one ordered numeric hyper-parameter of a grid: the main
// parameter (k, or the number of factors), an fsSLIM constant, FEBR's λ or
// a secondary setting of Params.Extra.
type dimension struct {
	name    string
	main    bool // extended with every secondary setting (Kind.Candidates)
	integer bool
	get     func(recsys.Params) (float64, bool)
	set     func(recsys.Params, float64) recsys.Params
}

// dimensions lists the dimensions of a kind's candidates with at least
// two values, all positive (so that a geometric step beyond either end
// exists): k (named mainName), ℓ1 and ℓ2, FEBR's λ and every Extra key.
// A kind with its own search (FEBR) extends k and λ only; its fsSLIM pair
// is chosen per k inside the search.
func dimensions(cands []recsys.Params, mainName string, search bool) []dimension {
	all := []dimension{{name: mainName, main: true, integer: true,
		get: func(p recsys.Params) (float64, bool) { return float64(p.K), p.K > 0 },
		set: func(p recsys.Params, v float64) recsys.Params { p.K = int(v); return p }}}
	if search {
		all = append(all, dimension{name: "lambda",
			get: func(p recsys.Params) (float64, bool) {
				o := febrOptions(p)
				if o == nil {
					return 0, false
				}
				return o.Lambda, true
			},
			set: func(p recsys.Params, v float64) recsys.Params {
				f := *febrOptions(p)
				f.Lambda = v
				p.Options = &f
				return p
			}})
	} else {
		all = append(all,
			dimension{name: "l1",
				get: func(p recsys.Params) (float64, bool) { return p.L1, p.L1 != 0 || p.L2 != 0 },
				set: func(p recsys.Params, v float64) recsys.Params { p.L1 = v; return p }},
			dimension{name: "l2",
				get: func(p recsys.Params) (float64, bool) { return p.L2, p.L1 != 0 || p.L2 != 0 },
				set: func(p recsys.Params, v float64) recsys.Params { p.L2 = v; return p }})
		keys := map[string]bool{}
		for _, p := range cands {
			for k := range p.Extra {
				keys[k] = true
			}
		}
		for _, key := range slices.Sorted(maps.Keys(keys)) {
			all = append(all, dimension{name: key,
				get: func(p recsys.Params) (float64, bool) { v, ok := p.Extra[key]; return v, ok },
				set: func(p recsys.Params, v float64) recsys.Params {
					p.Extra = maps.Clone(p.Extra)
					p.Extra[key] = v
					return p
				}})
		}
	}
	var out []dimension
	for _, d := range all {
		if vs := d.values(cands); len(vs) >= 2 && vs[0] > 0 {
			out = append(out, d)
		}
	}
	return out
}

// values are the distinct values of d among cands, ascending.
func (d dimension) values(cands []recsys.Params) []float64 {
	var vs []float64
	for _, p := range cands {
		if v, ok := d.get(p); ok {
			vs = append(vs, v)
		}
	}
	slices.Sort(vs)
	return slices.Compact(vs)
}

// format renders a value of d as the report does.
func (d dimension) format(v float64) string {
	return d.name + "=" + strconv.FormatFloat(v, 'g', -1, 64)
}

// Sides of a grid dimension.
const (
	below = iota
	above
)

// edgeState follows the extension of one dimension: its values so far,
// the geometric step of the original grid at either end (the ratio of its
// two outermost values), the extensions made on each side and whether a
// side cannot be extended (an integer below 1, or k capped by the data)
// or its next step was over the time budget.
type edgeState struct {
	d       dimension
	values  []float64
	ratio   [2]float64
	count   [2]int
	blocked [2]bool
	over    [2]bool // a step past the side was over the time budget
}

func newEdgeState(d dimension, cands []recsys.Params) *edgeState {
	vs := d.values(cands)
	n := len(vs)
	return &edgeState{d: d, values: vs, ratio: [2]float64{min(vs[1]/vs[0], MaxStep), min(vs[n-1]/vs[n-2], MaxStep)}}
}

// MaxStep caps the geometric step of an extension: the service's factor
// grid {10, 50} would otherwise step ×5 (250, then 1,250 factors), and the
// ℓ2 grid {10, 1, 0.1} ×10; two steps of at most ×2 bound the cost of an
// extension at the fits of a main value four times the grid's largest.
const MaxStep = 2.0

// at reports whether v is the value at the given end of the grid so far.
func (e *edgeState) at(side int, v float64) bool {
	if side == below {
		return v == e.values[0]
	}
	return v == e.values[len(e.values)-1]
}

// next is the value one geometric step beyond the given end, and false
// when there is none (an integer dimension would reach 0 or not move).
func (e *edgeState) next(side int) (float64, bool) {
	var v float64
	if side == below {
		v = e.values[0] / e.ratio[below]
	} else {
		v = e.values[len(e.values)-1] * e.ratio[above]
	}
	if e.d.integer {
		v = math.Round(v)
		if v < 1 || slices.Contains(e.values, v) {
			return 0, false
		}
	}
	return v, true
}

// add records value v as searched beyond the given end.
func (e *edgeState) add(side int, v float64) {
	e.count[side]++
	e.values = append(e.values, v)
	slices.Sort(e.values)
}

// extension is how extendEdges steps past a grid's edges: at most limit
// steps a side; gen lists the candidates of a step to value v of d from
// the choice best (none when k is capped by the data), try searches them
// and returns the (possibly new) choice; admit, when not nil, refuses a
// value (Tuning.MaxK), and afford, when not nil, is why a step's
// candidates are over the time budget ("" when they fit).
type extension struct {
	limit  int
	gen    func(d dimension, best recsys.Params, v float64) []recsys.Params
	try    func(cands []recsys.Params) (recsys.Params, error)
	admit  func(d dimension, v float64) bool
	afford func(d dimension, v float64, cands []recsys.Params) string
}

// edgeReport is what an extension did: the values added ("k=2000"), the
// chosen values still at an end after it ("k=4000"), which the reports
// flag (a larger grid might choose otherwise), and the steps the time
// budget left out, with the reason.
type edgeReport struct {
	extended, edges, skipped []string
}

// extendEdges extends the grid past its edges while the choice best sits
// at one (dissertation §4.7.3 leaves the grid's range open): for every
// dimension whose chosen value is the smallest or largest searched, it
// searches one geometric step beyond (the ratio of the grid's two
// outermost values, at most MaxStep: k 1000 → 2000 → 4000, ℓ2 10 → 20 →
// 40) with x.try, at most x.limit times per side. A step x.afford puts
// over the time budget is not taken: the value stays an edge and the
// reason is reported. It returns the choice and the report.
func extendEdges(best recsys.Params, dims []dimension, cands []recsys.Params, x extension) (recsys.Params, edgeReport, error) {
	states := make([]*edgeState, len(dims))
	for k, d := range dims {
		states[k] = newEdgeState(d, cands)
	}
	var rep edgeReport
	for moved := true; moved; {
		moved = false
		for _, e := range states {
			for side := range 2 {
				v, ok := e.d.get(best)
				if !ok || !e.at(side, v) || e.blocked[side] || e.over[side] {
					continue
				}
				next, ok := e.next(side)
				var cs []recsys.Params
				if ok {
					cs = x.gen(e.d, best, next)
				}
				if len(cs) == 0 {
					e.blocked[side] = true
					continue
				}
				if e.count[side] >= x.limit || x.admit != nil && !x.admit(e.d, next) {
					continue // an edge: the next value was not tried
				}
				if x.afford != nil {
					if why := x.afford(e.d, next, cs); why != "" {
						// An edge too; time only runs out, so the side is
						// not tried again.
						e.over[side] = true
						rep.skipped = append(rep.skipped, why)
						continue
					}
				}
				e.add(side, next)
				rep.extended = append(rep.extended, e.d.format(next))
				var err error
				if best, err = x.try(cs); err != nil {
					return best, edgeReport{}, err
				}
				moved = true
			}
		}
	}
	for _, e := range states {
		v, ok := e.d.get(best)
		for side := range 2 {
			if ok && e.at(side, v) && !e.blocked[side] {
				rep.edges = append(rep.edges, e.d.format(v))
			}
		}
	}
	return best, rep, nil
}
