package serving

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/recsys/rules"
)

// RulePool is how many of the best candidates the boost, bury and pin
// rules reorder. Like DiversityPool it is fixed, so that every page is cut
// from the same list; past it the list goes on in the model's order.
const RulePool = DiversityPool

// steerSet is the rules and placements the engine serves, compiled.
type steerSet struct {
	rules      []storedRule
	placements map[string]api.Placement
}

type storedRule struct {
	api.Rule
	compiled *rules.Rule
}

// SetSteering replaces the rules and placements the engine applies. A
// rule whose condition does not compile (stored by an older version) is
// left out, and the returned error names it; the others are served.
func (e *Engine) SetSteering(rs []api.Rule, ps []api.Placement) error {
	set := &steerSet{placements: make(map[string]api.Placement, len(ps))}
	var errs []error
	for _, r := range rs {
		p, err := e.exprs.Compile(r.Condition)
		if err != nil {
			errs = append(errs, fmt.Errorf("rule %q condition: %w", r.Name, err))
			continue
		}
		set.rules = append(set.rules, storedRule{Rule: r, compiled: &rules.Rule{Name: r.Name, Condition: p,
			Action: rules.Action(r.Action), Factor: r.Factor, Position: r.Position}})
	}
	for _, p := range ps {
		set.placements[p.Name] = p
	}
	e.steering.Store(set)
	return errors.Join(errs...)
}

// Placement returns the served placement name.
func (e *Engine) Placement(name string) (api.Placement, bool) {
	set := e.steering.Load()
	if set == nil {
		return api.Placement{}, false
	}
	p, ok := set.placements[name]
	return p, ok
}

// CheckExpression compiles src as the filter or condition field would
// be, and answers an invalid-field error naming the line and column of a
// problem.
func (e *Engine) CheckExpression(field, src string) error {
	_, err := e.compile(field, src)
	return err
}

func (e *Engine) compile(field, src string) (*rules.Program, error) {
	p, err := e.exprs.Compile(src)
	var pe *rules.Error
	if errors.As(err, &pe) {
		return nil, api.FieldError(field, pe.Error())
	}
	return p, err
}

// steer is the filters and rules of one request over one catalogue. It
// evaluates expressions with one virtual machine, so it belongs to the
// goroutine of the request.
type steer struct {
	c       *catalogueCache
	attrs   *api.ItemAttributes
	now     time.Time
	filters []*rules.Program // every item must satisfy each
	exclude []*rules.Program // the conditions of the active exclude rules
	order   []*rules.Rule    // the active boost, bury and pin rules
	errs    func()           // counts one failed evaluation
	ev      rules.Evaluator
	item    rules.Item
	// version is the memoVersion of attrs and c, boxed once a request:
	// each evaluation compares it with its program's memo.
	version any
	// explain asks apply to keep changed.
	explain bool
	// changed names, by item, the rules that moved or rescored it in the
	// last apply when explain is set.
	changed map[uint32][]string
}

// newSteer compiles what s asks for over catalogue c at the engine's
// time; nil when it asks for nothing, and no rule applies. With explain
// it keeps which rules changed each item (withRules).
func (e *Engine) newSteer(ctx context.Context, c *catalogueCache, s api.Steering, explain bool) (*steer, error) {
	st := &steer{c: c, now: e.now(), errs: e.filterErrors.Inc, explain: explain}
	for _, src := range s.Filters {
		p, err := e.compile("filter", src)
		if err != nil {
			return nil, err
		}
		st.filters = append(st.filters, p)
	}
	var listed []string
	if s.Placement != "" {
		p, ok := e.Placement(s.Placement)
		if !ok {
			return nil, api.Errorf(api.CodeNotFound, "placement %q not found", s.Placement)
		}
		listed = p.Rules
	}
	if set := e.steering.Load(); set != nil {
		for _, r := range set.rules {
			if !r.ActiveAt(st.now) || !r.Scoped(s.Placement, listed) {
				continue
			}
			if r.Action == api.ActionExclude {
				st.exclude = append(st.exclude, r.compiled.Condition)
			} else {
				st.order = append(st.order, r.compiled)
			}
		}
	}
	if len(st.filters) == 0 && len(st.exclude) == 0 && len(st.order) == 0 {
		return nil, nil
	}
	var err error
	if st.attrs, err = e.attributes(ctx, c); err != nil {
		return nil, err
	}
	st.version = memoVersion{st.attrs, c.cat}
	return st, nil
}

// load sets st.item to item i.
func (st *steer) load(i uint32) {
	cat, a := st.c.cat, st.attrs
	st.item = rules.Item{ID: cat.ItemIDs[i]}
	if int(i) < len(cat.Categories) {
		st.item.Categories = cat.Categories[i]
	}
	if int(i) < len(a.Labels) {
		st.item.Labels = a.Labels[i]
	}
	if int(i) < len(a.Features) {
		st.item.Features = a.Features[i]
	}
	if int(i) < len(a.Created) && a.Created[i] > 0 {
		st.item.AgeDays = max(float64(st.now.UnixNano()-a.Created[i])/float64(24*time.Hour), 0)
	}
}

// keep reports whether item i passes the filters and no exclude rule
// matches it. An expression that fails on the item leaves it out, and is
// counted.
func (st *steer) keep(i uint32) bool {
	if st == nil || (len(st.filters) == 0 && len(st.exclude) == 0) {
		return true
	}
	if int(i) >= len(st.c.cat.ItemIDs) || st.c.cat.ItemIDs[i] == "" {
		return false
	}
	loaded := false
	for _, p := range st.filters {
		if st.eval(p, i, &loaded) != rules.True {
			return false
		}
	}
	for _, p := range st.exclude {
		if st.eval(p, i, &loaded) != rules.False {
			return false
		}
	}
	return true
}

// memoVersion names the version of the items an outcome was computed
// over: their attributes and the catalogue's ids and categories.
type memoVersion struct {
	attrs *api.ItemAttributes
	cat   *api.Catalogue
}

// eval is p's outcome on item i: remembered when p has it over this
// version of the catalogue, else evaluated (loading item i into st.item
// unless *loaded says it is there). A failure is counted every time.
func (st *steer) eval(p *rules.Program, i uint32, loaded *bool) rules.Outcome {
	m := p.Memo(st.version, len(st.c.cat.ItemIDs))
	o := rules.Unknown
	if m != nil {
		o = m.Get(i)
	}
	if o == rules.Unknown {
		if !*loaded {
			st.load(i)
			*loaded = true
		}
		ok, err := st.ev.Match(p, &st.item)
		switch {
		case err != nil:
			o = rules.Failed
		case ok:
			o = rules.True
		default:
			o = rules.False
		}
		if m != nil {
			m.Set(i, o)
		}
	}
	if o == rules.Failed {
		st.errs()
	}
	return o
}

// keepFunc is st.keep when st leaves items out, else nil.
func (st *steer) keepFunc() func(uint32) bool {
	if !st.leavesOut() {
		return nil
	}
	return st.keep
}

// leavesOut reports whether st may leave items out.
func (st *steer) leavesOut() bool { return st != nil && (len(st.filters) > 0 || len(st.exclude) > 0) }

// match reports whether rule r's condition holds for item i; one that
// fails on the item does not hold, and is counted.
func (st *steer) match(r *rules.Rule, i uint32) bool {
	loaded := false
	return st.eval(r.Condition, i, &loaded) == rules.True
}

// reorders reports whether st has rules that reorder a list.
func (st *steer) reorders() bool { return st != nil && len(st.order) > 0 }

// apply reorders the first RulePool candidates of ranked by the rules.
func (st *steer) apply(ranked []Candidate) []Candidate {
	if !st.reorders() {
		return ranked
	}
	head := ranked[:min(len(ranked), RulePool)]
	pool := make([]rules.Entry, len(head))
	for k, c := range head {
		pool[k] = rules.Entry{Item: c.Item, Score: c.Score}
	}
	pool = rules.Apply(pool, st.order, st.match)
	out := make([]Candidate, 0, len(ranked))
	if st.explain {
		st.changed = map[uint32][]string{}
	}
	for _, p := range pool {
		out = append(out, Candidate{Item: p.Item, Score: p.Score})
		if st.explain && len(p.Rules) > 0 {
			st.changed[p.Item] = p.Rules
		}
	}
	return append(out, ranked[len(head):]...)
}

// steered wraps fetch, a ranking's first k candidates, into the ranking
// the rules of st make: fetched RulePool deep at least, reordered, cut
// to k.
func (st *steer) steered(fetch func(k int) ([]Candidate, error)) func(k int) ([]Candidate, error) {
	if !st.reorders() {
		return fetch
	}
	return func(k int) ([]Candidate, error) {
		ranked, err := fetch(max(k, RulePool))
		if err != nil {
			return nil, err
		}
		out := st.apply(ranked)
		return out[:min(k, len(out))], nil
	}
}

// itemAttributes are the attributes of one version of the catalogue.
type itemAttributes struct {
	version uint64
	attrs   *api.ItemAttributes
}

// attributes returns the item attributes of catalogue c, read from the
// source once per version of the items, the first time an expression
// needs them.
func (e *Engine) attributes(ctx context.Context, c *catalogueCache) (*api.ItemAttributes, error) {
	if a := e.attrs.Load(); a != nil && a.version == c.itemsVersion {
		return a.attrs, nil
	}
	e.attrsMu.Lock()
	defer e.attrsMu.Unlock()
	if a := e.attrs.Load(); a != nil && a.version == c.itemsVersion {
		return a.attrs, nil
	}
	attrs, err := e.src.ItemAttributes(ctx)
	if err != nil {
		return nil, err
	}
	e.attrs.Store(&itemAttributes{version: c.itemsVersion, attrs: attrs})
	return attrs, nil
}

// withRules names on each item of catalogue c the rules of st that
// changed it.
func withRules(c *catalogueCache, items []api.ScoredItem, st *steer) {
	if st == nil || len(st.changed) == 0 {
		return
	}
	for k := range items {
		if i, ok := c.cat.Index[items[k].ItemID]; ok {
			items[k].Rules = slices.Clone(st.changed[i])
		}
	}
}

// LoadSteering reads the rules and placements of src and serves them
// (SetSteering). A process calls it at start, after each of its own
// writes, and when another replica says it wrote. Loads run one at a
// time: one that read before a write committed must not store after the
// writer's own load has stored, or the write would vanish until the next.
func (e *Engine) LoadSteering(ctx context.Context, src api.RuleReader) error {
	e.steerMu.Lock()
	defer e.steerMu.Unlock()
	rs, err := src.Rules(ctx)
	if err != nil {
		return err
	}
	ps, err := src.Placements(ctx)
	if err != nil {
		return err
	}
	return e.SetSteering(rs, ps)
}
