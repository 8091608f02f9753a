// Package content is the learned content metric as a model kind of its
// own: a metric over item features learned so that each item's
// collaborative neighbours rank first (Content), with the cold rule that
// says which cold items may take a slot. It registers itself with package
// recsys under Name.
//
// Works cited in the comments are listed in docs/references.md.
package content

import (
	"errors"
	"fmt"
	"math"

	"github.com/recsys-engine/recsys/recsys"
	"github.com/recsys-engine/recsys/recsys/blob"
	"github.com/recsys-engine/recsys/retrieval"
)

// Name is the name under which the learned content metric is served,
// persisted and listed in GET /models.
const Name = "content"

// The content metric is a kind of its own: trained by default, read back
// by UnmarshalBinary, never a recommender.
func init() {
	recsys.Register(Name, recsys.Kind{Train: train, Decode: decode, Service: recsys.Service{Default: true, Cost: cost}})
}

// cost is the content metric's Service.Cost. Its time was not measured
// at scale (the scale runs' items have no features), so it is not
// predicted. Its memory is the items' collaborative neighbour lists
// (contentNeighbours each) and their feature rows, read and copied into
// the metric's training set (8 bytes a value, twice).
func cost(s recsys.Shape) recsys.Cost {
	return recsys.Cost{Bytes: recsys.ListBytes(s.Items, contentNeighbours) + 2*8*int64(s.Items)*int64(s.Features),
		Memory: fmt.Sprintf("the features and neighbour lists of %s items", recsys.FormatCount(int64(s.Items)))}
}

func decode(b []byte) (recsys.Artefact, error) {
	c := new(Content)
	if err := c.UnmarshalBinary(b); err != nil {
		return nil, err
	}
	return c, nil
}

// Content is the learned content metric: a metric over item features and
// the names of the features it was learned on, in order. It ranks items
// for an item or a feature vector (by=content, POST /search/similar, cold
// slots), not for a user, so it is served beside the recommenders but is
// never the active model; the engine projects the catalogue by it
// (recsys/serving). Its cold rule says which cold items may take a slot.
type Content struct {
	names  []string
	metric *retrieval.Metric
	cold   *ColdRule // nil in a model persisted before cold rules
}

// MinColdSupport is the fewest items the metric was learned on that must
// have a feature (a nonzero value) for it to count as evidence for a cold
// item: a feature that one known item has is that item's identity, not a
// trait that known items share (docs/design.md#cold-start).
const MinColdSupport = 2

// ColdRule is what a cold item needs to earn a slot, learned with the
// metric (docs/design.md#cold-start).
type ColdRule struct {
	// Support holds, per feature in the model's order, how many of the
	// items the metric was learned on have it (a nonzero value).
	Support []uint32
	// MaxDistance is the largest squared distance under the metric from a
	// cold item to the user's recent history at which the item may take a
	// slot, chosen on validation; +Inf when validation chose none.
	MaxDistance float64
}

// NewContent returns the content model of metric m, learned on the
// features called names, without a cold rule: any of its features counts
// as evidence and no distance is too far, as in models persisted before
// cold rules.
func NewContent(names []string, m *retrieval.Metric) *Content {
	return &Content{names: names, metric: m}
}

// WithColdRule returns c with cold rule r.
func (c *Content) WithColdRule(r ColdRule) (*Content, error) {
	if len(r.Support) != len(c.names) {
		return nil, fmt.Errorf("content model: support of %d features for %d feature names", len(r.Support), len(c.names))
	}
	if !(r.MaxDistance >= 0) {
		return nil, fmt.Errorf("content model: cold distance threshold %v, want ≥ 0 or +Inf", r.MaxDistance)
	}
	return &Content{names: c.names, metric: c.metric, cold: &r}, nil
}

// Names are the names of the features the metric was learned on, in the
// metric's order. Do not modify them.
func (c *Content) Names() []string { return c.names }

// Evidence reports whether feature k of the model counts as evidence for
// a cold item: enough of the items the metric was learned on have it.
func (c *Content) Evidence(k int) bool { return c.cold == nil || c.cold.Support[k] >= MinColdSupport }

// MaxColdDistance is ColdRule.MaxDistance, +Inf without a rule.
func (c *Content) MaxColdDistance() float64 {
	if c.cold == nil {
		return math.Inf(1)
	}
	return c.cold.MaxDistance
}

// MarshalBinary writes the model (package blob's layouts). Without a cold
// rule: the number of feature names, each name, then the metric as
// retrieval writes it. With one: a zero byte (no model has zero names),
// the layout version 1, the names as before, each feature's support as a
// uvarint, the distance threshold as a float64, then the metric.
func (c *Content) MarshalBinary() ([]byte, error) { return encodeContent(c) }

// UnmarshalBinary reads what MarshalBinary wrote.
func (c *Content) UnmarshalBinary(b []byte) error {
	d, err := decodeContent(b)
	if err != nil {
		return err
	}
	*c = *d
	return nil
}

var errCorruptContent = errors.New("content model: corrupt data")

// contentColdLayout is the layout version of a model with a cold rule.
const contentColdLayout = 1

func encodeContent(c *Content) ([]byte, error) {
	mb, err := c.metric.MarshalBinary()
	if err != nil {
		return nil, err
	}
	e := blob.NewEncoder(nil)
	if c.cold != nil {
		e.Byte(0)
		e.Byte(contentColdLayout)
	}
	e.Uvarint(uint64(len(c.names)))
	for _, n := range c.names {
		e.Str(n)
	}
	if c.cold != nil {
		for _, s := range c.cold.Support {
			e.Uvarint(uint64(s))
		}
		e.Float64(c.cold.MaxDistance)
	}
	e.Raw(mb)
	return e.Bytes(), nil
}

func decodeContent(b []byte) (*Content, error) {
	d := blob.NewDecoder(b, errCorruptContent)
	withCold := len(b) > 0 && b[0] == 0
	if withCold {
		d.MinimalUvarints()
		d.Byte()
		if v := d.Byte(); d.Err() == nil && v != contentColdLayout {
			return nil, fmt.Errorf("content model: layout version %d, want %d", v, contentColdLayout)
		}
	}
	// Each name takes at least its one-byte length (Count), and no
	// catalogue has a million features: a larger count is corrupt and must
	// not size an allocation.
	n := d.Count(1)
	if n > 1<<20 {
		d.Fail(nil)
		n = 0
	}
	names := make([]string, n)
	for i := range names {
		names[i] = d.Str()
	}
	var cold *ColdRule
	if withCold {
		cold = &ColdRule{Support: make([]uint32, n)}
		for k := range cold.Support {
			cold.Support[k] = uint32(d.Bounded(math.MaxUint32))
		}
		if cold.MaxDistance = d.Float64(); d.Err() == nil && !(cold.MaxDistance >= 0) {
			d.Fail(nil)
		}
	}
	if err := d.Err(); err != nil {
		return nil, err
	}
	m := new(retrieval.Metric)
	if err := m.UnmarshalBinary(d.Rest()); err != nil {
		return nil, err
	}
	if m.Dim() != len(names) {
		return nil, fmt.Errorf("content model: %d feature names for a metric of dimension %d", len(names), m.Dim())
	}
	return &Content{names: names, metric: m, cold: cold}, nil
}

// Metric is the learned metric.
func (c *Content) Metric() *retrieval.Metric { return c.metric }

// Cold is the cold rule, the zero rule with no threshold (+Inf) when the
// model has none.
func (c *Content) Cold() ColdRule {
	if c.cold == nil {
		return ColdRule{MaxDistance: math.Inf(1)}
	}
	return *c.cold
}
