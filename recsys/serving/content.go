package serving

import (
	"errors"
	"fmt"

	"recsys/recsys/blob"
	"recsys/retrieval"
)

// ContentModelName is the name under which the learned content metric is
// served, persisted and listed in GET /models.
const ContentModelName = "content"

func init() {
	RegisterKind(ContentModelName, func(b []byte) (Artefact, error) {
		c := new(Content)
		if err := c.UnmarshalBinary(b); err != nil {
			return nil, err
		}
		return c, nil
	})
}

// Content is the learned content metric: a metric over item features and
// the names of the features it was learned on, in order. It ranks items
// for an item or a feature vector (by=content, POST /search/similar, cold
// slots), not for a user, so it is served beside the recommenders but is
// never the active model; the engine projects the catalogue by it
// (search.go).
type Content struct {
	names  []string
	metric *retrieval.Metric
}

// NewContent returns the content model of metric m, learned on the
// features called names.
func NewContent(names []string, m *retrieval.Metric) *Content {
	return &Content{names: names, metric: m}
}

// MarshalBinary writes the model: the number of feature names, each name,
// then the metric as retrieval writes it (package blob's layouts).
func (c *Content) MarshalBinary() ([]byte, error) { return encodeContent(c.names, c.metric) }

// UnmarshalBinary reads what MarshalBinary wrote.
func (c *Content) UnmarshalBinary(b []byte) error {
	names, m, err := decodeContent(b)
	if err != nil {
		return err
	}
	c.names, c.metric = names, m
	return nil
}

var errCorruptContent = errors.New("content model: corrupt data")

// encodeContent writes the feature names and the metric.
func encodeContent(names []string, m *retrieval.Metric) ([]byte, error) {
	mb, err := m.MarshalBinary()
	if err != nil {
		return nil, err
	}
	e := blob.NewEncoder(nil)
	e.Uvarint(uint64(len(names)))
	for _, n := range names {
		e.Str(n)
	}
	e.Raw(mb)
	return e.Bytes(), nil
}

func decodeContent(b []byte) ([]string, *retrieval.Metric, error) {
	d := blob.NewDecoder(b, errCorruptContent)
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
	if err := d.Err(); err != nil {
		return nil, nil, err
	}
	m := new(retrieval.Metric)
	if err := m.UnmarshalBinary(d.Rest()); err != nil {
		return nil, nil, err
	}
	if m.Dim() != len(names) {
		return nil, nil, fmt.Errorf("content model: %d feature names for a metric of dimension %d", len(names), m.Dim())
	}
	return names, m, nil
}
