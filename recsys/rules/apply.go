package rules

import (
	"cmp"
	"slices"
)

// Action is what a rule does to the items its condition matches.
type Action string

// The actions of a rule (docs/rules.md#actions).
const (
	// Exclude leaves the item out of the answer.
	Exclude Action = "exclude"
	// Boost multiplies the item's score by the factor, and the pool is
	// sorted again by the boosted scores.
	Boost Action = "boost"
	// Bury moves the item to the end of the pool.
	Bury Action = "bury"
	// Pin puts the first matching item at the position (from 1).
	Pin Action = "pin"
)

// Actions lists the actions a rule may take.
var Actions = []Action{Exclude, Boost, Bury, Pin}

// Rule is a compiled rule as Apply uses it.
type Rule struct {
	Name      string
	Condition *Program
	Action    Action
	Factor    float64 // boost
	Position  int     // pin, from 1
}

// Entry is one candidate of the pool: its dense item index, its score,
// and the names of the rules that changed it.
type Entry struct {
	Item  uint32
	Score float64
	Rules []string
}

// Boosted is score boosted by factor (> 0): score·factor, or
// score/factor for a negative score, so that a factor above 1 always
// raises an item and one below 1 always lowers it.
func Boosted(score, factor float64) float64 {
	if score < 0 {
		return score / factor
	}
	return score * factor
}

// Apply reorders pool, ranked best first, by the boost, bury and pin
// rules of rs (exclude rules are filters, applied before ranking), in
// this order: every matching boost multiplies an item's score (Boosted),
// and the pool is sorted again by score, equal scores keeping their
// order; then the items a bury rule matches go to the end, in the order
// they had; then each pin rule, by increasing position (equal positions
// in the order of rs), moves the first item it matches that no earlier
// pin placed to its position, or to the end of a shorter pool. match
// reports whether a rule's condition holds for an item. The entries of
// pool are changed in place; the result holds the same entries.
func Apply(pool []Entry, rs []*Rule, match func(r *Rule, item uint32) bool) []Entry {
	if len(pool) == 0 || len(rs) == 0 {
		return pool
	}
	resort := false
	for _, r := range rs {
		if r.Action != Boost {
			continue
		}
		for k := range pool {
			if match(r, pool[k].Item) {
				pool[k].Score = Boosted(pool[k].Score, r.Factor)
				pool[k].Rules = append(pool[k].Rules, r.Name)
				resort = true
			}
		}
	}
	if resort {
		slices.SortStableFunc(pool, func(a, b Entry) int { return cmp.Compare(b.Score, a.Score) })
	}
	buried := make([]bool, len(pool))
	anyBuried := false
	for _, r := range rs {
		if r.Action != Bury {
			continue
		}
		for k := range pool {
			if match(r, pool[k].Item) {
				if !buried[k] {
					buried[k], anyBuried = true, true
				}
				pool[k].Rules = append(pool[k].Rules, r.Name)
			}
		}
	}
	if anyBuried {
		out := make([]Entry, 0, len(pool))
		for k := range pool {
			if !buried[k] {
				out = append(out, pool[k])
			}
		}
		for k := range pool {
			if buried[k] {
				out = append(out, pool[k])
			}
		}
		pool = out
	}
	var pins []*Rule
	for _, r := range rs {
		if r.Action == Pin {
			pins = append(pins, r)
		}
	}
	slices.SortStableFunc(pins, func(a, b *Rule) int { return cmp.Compare(a.Position, b.Position) })
	// Each pin takes the first item it matches that no pin before it
	// took, in the order bury left; then the taken items leave the pool
	// and go back at their positions, lowest first, a pin whose position
	// an earlier one holds taking the next.
	taken := map[uint32]int{} // item → index in pins
	var at []int              // pool index of each pin's item, -1 for none
	for p, r := range pins {
		from := -1
		for k := range pool {
			if _, ok := taken[pool[k].Item]; !ok && match(r, pool[k].Item) {
				from = k
				break
			}
		}
		if from >= 0 {
			taken[pool[from].Item] = p
			pool[from].Rules = append(pool[from].Rules, r.Name)
		}
		at = append(at, from)
	}
	if len(taken) == 0 {
		return pool
	}
	rest := make([]Entry, 0, len(pool))
	for _, e := range pool {
		if _, ok := taken[e.Item]; !ok {
			rest = append(rest, e)
		}
	}
	prev := -1
	for p, r := range pins {
		if at[p] < 0 {
			continue
		}
		to := min(max(r.Position-1, prev+1), len(rest))
		rest = slices.Insert(rest, to, pool[at[p]])
		prev = to
	}
	return rest
}
