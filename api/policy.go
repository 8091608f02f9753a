package api

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// EventType says how one interaction type counts toward relevance.
type EventType struct {
	Negative bool    // dislike, hide: excludes the item, never relevant
	MinValue float64 // an event with a value below this is not relevant
	HasMin   bool
}

// Policy derives the binary relevance matrix X from events (docs/design.md#data):
// which types are accepted, which are negative, and per-type thresholds.
type Policy struct {
	Types map[string]EventType
}

// DefaultPolicySpec is the policy used when none is configured.
const DefaultPolicySpec = "view,click,purchase,play,like,cart,rating>=4,!dislike,!hide"

// DefaultType is the type of an event posted without one.
const DefaultType = "view"

// DefaultPolicy returns the policy of DefaultPolicySpec.
func DefaultPolicy() Policy {
	p, err := ParsePolicy(DefaultPolicySpec)
	if err != nil {
		panic(err)
	}
	return p
}

// ParsePolicy reads a comma-separated list of types: "name" (positive),
// "name>=X" (positive when the value is at least X; an event of that type
// must carry a value), "!name" (negative).
func ParsePolicy(spec string) (Policy, error) {
	p := Policy{Types: map[string]EventType{}}
	for _, f := range strings.Split(spec, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		var t EventType
		if strings.HasPrefix(f, "!") {
			t.Negative = true
			f = f[1:]
		}
		if name, min, ok := strings.Cut(f, ">="); ok {
			v, err := strconv.ParseFloat(strings.TrimSpace(min), 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return Policy{}, fmt.Errorf("event type %q: threshold %q is not a finite number", name, min)
			}
			t.MinValue, t.HasMin, f = v, true, strings.TrimSpace(name)
		}
		if f == "" || len(f) > 64 {
			return Policy{}, fmt.Errorf("event type names must be 1-64 bytes")
		}
		p.Types[f] = t
	}
	if len(p.Types) == 0 {
		return Policy{}, fmt.Errorf("the event type list is empty")
	}
	if _, ok := p.Types[DefaultType]; !ok {
		p.Types[DefaultType] = EventType{}
	}
	return p, nil
}

// String renders the policy in the syntax ParsePolicy reads.
func (p Policy) String() string {
	var parts []string
	for name, t := range p.Types {
		s := name
		if t.Negative {
			s = "!" + s
		}
		if t.HasMin {
			s += ">=" + strconv.FormatFloat(t.MinValue, 'g', -1, 64)
		}
		parts = append(parts, s)
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

// WithMin returns a copy of p in which typ is positive from min on.
func (p Policy) WithMin(typ string, min float64) Policy {
	q := Policy{Types: make(map[string]EventType, len(p.Types)+1)}
	for k, v := range p.Types {
		q.Types[k] = v
	}
	q.Types[typ] = EventType{MinValue: min, HasMin: true}
	return q
}

// Judge tells whether ev makes its pair relevant or negative. The error,
// an invalid-input *Error, names the field at fault: "type" for an unknown
// type (listing the accepted ones), "value" for an event of a thresholded
// type without a value, which could only be guessed relevant or not.
func (p Policy) Judge(ev Interaction) (positive, negative bool, err error) {
	t, ok := p.Types[ev.Type]
	if !ok {
		names := make([]string, 0, len(p.Types))
		for n := range p.Types {
			names = append(names, n)
		}
		sort.Strings(names)
		return false, false, FieldError("type", fmt.Sprintf("unknown type %q (accepted: %s)", ev.Type, strings.Join(names, ", ")))
	}
	if t.Negative {
		return false, true, nil
	}
	if t.HasMin && !ev.HasValue {
		return false, false, FieldError("value", fmt.Sprintf("type %s needs a value (it is relevant when the value is at least %s)",
			ev.Type, strconv.FormatFloat(t.MinValue, 'g', -1, 64)))
	}
	if t.HasMin && ev.Value < t.MinValue {
		return false, false, nil
	}
	return true, false, nil
}
