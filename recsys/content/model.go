// Package content is the learned content metric as a model kind of its
// own: a metric over item features learned so that each item's
// collaborative neighbours rank first (Content), with the cold rule that
// says which cold items may take a slot. It registers itself with package
// recsys under Name.
//
// Works cited in the comments are listed in docs/references.md.
package content

import (
	"crypto/sha256"
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
// the metric's training set (8 bytes a value, twice). Above the default
// approximate threshold it adds the graph built at training (BuildGraph),
// as if every item had features: each item's projected vector in float64
// and float32 (12 bytes a dimension, of min(features, 32)), its links
// (2M + 1 = 33 four-byte slots) and their encoding in the model's record
// (about as many bytes again).
func cost(s recsys.Shape) recsys.Cost {
	bytes := recsys.ListBytes(s.Items, contentNeighbours) + 2*8*int64(s.Items)*int64(s.Features)
	memory := fmt.Sprintf("the features and neighbour lists of %s items", recsys.FormatCount(int64(s.Items)))
	if s.Items > retrieval.DefaultApproxAbove {
		bytes += int64(s.Items) * (12*int64(min(s.Features, 32)) + 2*4*33)
		memory += " and their HNSW graph"
	}
	return recsys.Cost{Bytes: bytes, Memory: memory}
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
	graph  *Graph    // nil: none was built at training
}

// Graph is the HNSW graph of the catalogue's featured items projected by
// the metric, built at training when they were more than the approximate
// search threshold, so that a server need not build it at load. It is
// valid for a catalogue whose featured items are Items, with the
// projected vectors of Fingerprint; serving checks both and builds its
// own graph when either differs (items or features changed since
// training).
type Graph struct {
	// Items are the dense item indices of the graph's nodes, in node
	// order: every item with features, by increasing index.
	Items []uint32
	// Fingerprint is retrieval.Index.Fingerprint of their projected
	// vectors.
	Fingerprint [sha256.Size]byte
	HNSW        *retrieval.HNSWGraph
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
	return &Content{names: c.names, metric: c.metric, cold: &r, graph: c.graph}, nil
}

// WithGraph returns c with graph g, which must have a node per item.
func (c *Content) WithGraph(g Graph) (*Content, error) {
	if g.HNSW == nil || g.HNSW.Len() != len(g.Items) {
		return nil, fmt.Errorf("content model: a graph without a node per item")
	}
	if c.cold == nil {
		return nil, fmt.Errorf("content model: a graph needs a cold rule (the layout that holds it)")
	}
	out := *c
	out.graph = &g
	return &out, nil
}

// Graph is the graph built at training, nil when none was. Do not modify
// it.
func (c *Content) Graph() *Graph { return c.graph }

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
// uvarint, the distance threshold as a float64, then the metric. With a
// graph too: layout version 2, which writes after the threshold the
// number of items, each item's dense index as a uint32, the 32-byte
// fingerprint, the graph's length in bytes and the graph as retrieval
// writes it (HNSWGraph), then the metric.
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

// contentColdLayout is the layout version of a model with a cold rule,
// contentGraphLayout of one with a graph as well.
const (
	contentColdLayout  = 1
	contentGraphLayout = 2
)

func encodeContent(c *Content) ([]byte, error) {
	mb, err := c.metric.MarshalBinary()
	if err != nil {
		return nil, err
	}
	var gb []byte
	if c.graph != nil {
		if gb, err = c.graph.HNSW.MarshalBinary(); err != nil {
			return nil, err
		}
	}
	e := blob.NewEncoder(nil)
	switch {
	case c.graph != nil:
		e.Byte(0)
		e.Byte(contentGraphLayout)
	case c.cold != nil:
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
	if c.graph != nil {
		e.Uvarint(uint64(len(c.graph.Items)))
		e.Uint32s(c.graph.Items)
		e.Raw(c.graph.Fingerprint[:])
		e.Uvarint(uint64(len(gb)))
		e.Raw(gb)
	}
	e.Raw(mb)
	return e.Bytes(), nil
}

func decodeContent(b []byte) (*Content, error) {
	d := blob.NewDecoder(b, errCorruptContent)
	withCold, withGraph := len(b) > 0 && b[0] == 0, false
	if withCold {
		d.MinimalUvarints()
		d.Byte()
		v := d.Byte()
		if d.Err() == nil && v != contentColdLayout && v != contentGraphLayout {
			return nil, fmt.Errorf("content model: layout version %d, want %d or %d", v, contentColdLayout, contentGraphLayout)
		}
		withGraph = v == contentGraphLayout
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
	var graph *Graph
	if withGraph {
		g, err := decodeGraph(d)
		if err != nil {
			return nil, err
		}
		graph = g
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
	if graph != nil && graph.HNSW.Dim() != m.Rank() {
		return nil, fmt.Errorf("content model: a graph of dimension %d for a metric of rank %d", graph.HNSW.Dim(), m.Rank())
	}
	return &Content{names: names, metric: m, cold: cold, graph: graph}, nil
}

// decodeGraph reads the graph section of layout contentGraphLayout. The
// items must increase (they are the featured items in index order) and
// number the graph's nodes.
func decodeGraph(d *blob.Decoder) (*Graph, error) {
	g := &Graph{Items: d.Uint32s(d.Count(4))}
	copy(g.Fingerprint[:], d.Raw(sha256.Size))
	raw := d.Raw(d.Count(1))
	if err := d.Err(); err != nil {
		return nil, err
	}
	increasing := len(g.Items) > 0
	for k := 1; k < len(g.Items) && increasing; k++ {
		increasing = g.Items[k-1] < g.Items[k]
	}
	if !increasing {
		return nil, fmt.Errorf("content model: graph items not increasing: %w", errCorruptContent)
	}
	g.HNSW = new(retrieval.HNSWGraph)
	if err := g.HNSW.UnmarshalBinary(raw); err != nil {
		return nil, fmt.Errorf("content model: graph: %w", err)
	}
	if g.HNSW.Len() != len(g.Items) {
		return nil, fmt.Errorf("content model: a graph of %d nodes for %d items: %w", g.HNSW.Len(), len(g.Items), errCorruptContent)
	}
	return g, nil
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
