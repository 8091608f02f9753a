package api

import "fmt"

// Diversity asks for a ranked list to be diversified after ranking and
// before paging (docs/design.md#diversity): the zero value leaves the
// list as the model ranked it. A request sets it from its
// max_per_category and diversity parameters; a placement sets its own
// and narrows it with the request's (Within).
type Diversity struct {
	// MaxPerCategory, when positive, keeps at most that many items of
	// any one category in the list. An item in several categories counts
	// toward each; an item without categories counts toward none.
	MaxPerCategory int
	// Lambda, when set, re-ranks by maximal marginal relevance with this
	// λ in [0, 1], the weight of relevance against similarity to the
	// items placed above: 1 is the model's order, 0 the most diverse.
	Lambda *float64
}

// On reports whether d changes a list.
func (d Diversity) On() bool { return d.MaxPerCategory > 0 || d.Lambda != nil }

// Validate reports a setting out of range as an invalid-field error
// naming the request parameter.
func (d Diversity) Validate() error {
	if d.MaxPerCategory < 0 {
		return FieldError("max_per_category", fmt.Sprintf("must be at least 1, got %d", d.MaxPerCategory))
	}
	if d.Lambda != nil && !(*d.Lambda >= 0 && *d.Lambda <= 1) {
		return FieldError("diversity", fmt.Sprintf("must be between 0 and 1, got %v", *d.Lambda))
	}
	return nil
}

// Within is d (a request's settings) narrowing outer (a placement's): the
// smaller of two category caps, and the request's λ when it gives one,
// else the placement's.
func (d Diversity) Within(outer Diversity) Diversity {
	out := outer
	if d.MaxPerCategory > 0 && (out.MaxPerCategory == 0 || d.MaxPerCategory < out.MaxPerCategory) {
		out.MaxPerCategory = d.MaxPerCategory
	}
	if d.Lambda != nil {
		out.Lambda = d.Lambda
	}
	return out
}
