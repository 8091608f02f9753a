package content

import (
	"context"
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/recsys-engine/recsys/recsys"
	"github.com/recsys-engine/recsys/retrieval"
)

// graphData is a catalogue of n items over three features, every fifth
// without features, and a content model with a cold rule over them.
func graphData(n int) (*Content, recsys.TrainData) {
	rng := rand.New(rand.NewPCG(4, 2))
	d := recsys.TrainData{FeatureNames: []string{"a", "b", "c"}, Features: make([][]float64, n)}
	for i := range d.Features {
		if i%5 == 4 {
			continue
		}
		c := float64(rng.IntN(8))
		d.Features[i] = []float64{c + 0.3*rng.NormFloat64(), rng.NormFloat64(), 2 * rng.NormFloat64()}
	}
	m := retrieval.Euclidean([]float64{0.5, 0, 0}, []float64{1, 2, 0.5})
	c, err := NewContent(d.FeatureNames, m).WithColdRule(ColdRule{Support: []uint32{5, 5, 5}, MaxDistance: 3})
	if err != nil {
		panic(err)
	}
	return c, d
}

// TestBuildGraph_threshold: the graph is built only when the featured items
// (4 in 5 of 2,500: 2,000) are more than the threshold, never with a
// negative one, and not at the default threshold of 100,000.
func TestBuildGraph_threshold(t *testing.T) {
	c, d := graphData(2500)
	for _, tc := range []struct {
		above int
		want  bool
	}{{1999, true}, {2000, false}, {-1, false}, {0, false}} {
		d.ContentApproxAbove = tc.above
		got, err := BuildGraph(context.Background(), c, d.Features, d.ContentApproxAbove, nil)
		if err != nil {
			t.Fatal(err)
		}
		if (got.Graph() != nil) != tc.want {
			t.Errorf("threshold %d: graph %v, want %v", tc.above, got.Graph() != nil, tc.want)
		}
	}
}

// TestContent_graphRoundTrip: a model with its graph encodes and decodes
// to the same items and fingerprint; the fingerprint is that of the
// catalogue projected by the decoded metric, as serving projects it; and
// the decoded graph answers the same neighbours as the one built at
// training.
func TestContent_graphRoundTrip(t *testing.T) {
	c, d := graphData(2500)
	d.ContentApproxAbove = 1000
	c, err := BuildGraph(context.Background(), c, d.Features, d.ContentApproxAbove, nil)
	if err != nil {
		t.Fatal(err)
	}
	g := c.Graph()
	if g == nil || len(g.Items) != 2000 || g.Items[3] != 3 || g.Items[4] != 5 {
		t.Fatalf("graph items %v, want the 2,000 featured items by index", g.Items[:min(6, len(g.Items))])
	}
	b, err := c.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var back Content
	if err := back.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	bg := back.Graph()
	if bg == nil || !slices.Equal(bg.Items, g.Items) || bg.Fingerprint != g.Fingerprint {
		t.Fatal("the decoded graph's items or fingerprint differ")
	}
	if back.Cold().MaxDistance != 3 || !slices.Equal(back.Cold().Support, []uint32{5, 5, 5}) {
		t.Fatalf("cold rule %+v after the round trip", back.Cold())
	}
	var vecs [][]float64
	for _, f := range d.Features {
		if f != nil {
			vecs = append(vecs, f)
		}
	}
	s, err := retrieval.NewSearcher(back.Metric(), vecs)
	if err != nil {
		t.Fatal(err)
	}
	if s.Index.Fingerprint() != g.Fingerprint {
		t.Fatal("the catalogue projected by the decoded metric has another fingerprint")
	}
	built, err := retrieval.AttachHNSW(s.Index, g.HNSW)
	if err != nil {
		t.Fatal(err)
	}
	decoded, err := retrieval.AttachHNSW(s.Index, bg.HNSW)
	if err != nil {
		t.Fatal(err)
	}
	for id := 0; id < 2000; id += 13 {
		w, a := built.SearchID(id, 10, nil), decoded.SearchID(id, 10, nil)
		if len(w) != 10 || !slices.Equal(w, a) {
			t.Fatalf("item %d: decoded graph answers %v, built %v", id, a, w)
		}
	}
}

// TestContent_corruptGraph: a damaged graph section fails the decode with
// an error naming the graph, never a panic: a link past the last node,
// items out of order and a truncation inside the graph.
func TestContent_corruptGraph(t *testing.T) {
	c, d := graphData(1500)
	d.ContentApproxAbove = 100
	c, err := BuildGraph(context.Background(), c, d.Features, d.ContentApproxAbove, nil)
	if err != nil {
		t.Fatal(err)
	}
	good, _ := c.MarshalBinary()
	gb, _ := c.Graph().HNSW.MarshalBinary()
	at := strings.Index(string(good), string(gb)) // where the graph's bytes start
	itemsAt := strings.Index(string(good), string(binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, 0), 1)))
	if at < 0 || itemsAt < 0 || itemsAt > at {
		t.Fatal("the graph or its items are not where this test expects them")
	}
	// Node 0's layer-0 row follows the header (magic, version, three
	// uvarints, the seed, three more) and the n level bytes: give it one
	// link, past the last node.
	o := at + 5
	for k := range 6 {
		if k == 3 {
			o += 8
		}
		_, w := binary.Uvarint(good[o:])
		o += w
	}
	o += 1200
	linkPastN := slices.Clone(good)
	binary.LittleEndian.PutUint32(linkPastN[o:], 1)
	binary.LittleEndian.PutUint32(linkPastN[o+4:], 1200)
	swapped := slices.Clone(good)
	copy(swapped[itemsAt:], binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, 1), 0))
	cases := map[string][]byte{
		"truncated graph": good[:at+len(gb)/2],
		"items swapped":   swapped,
		"link past n":     linkPastN,
	}
	// The unchanged bytes decode, so each case fails by its change alone.
	var back Content
	if err := back.UnmarshalBinary(good); err != nil {
		t.Fatal(err)
	}
	for name, b := range cases {
		t.Run(name, func(t *testing.T) {
			var back Content
			err := back.UnmarshalBinary(b)
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), "graph") && !strings.Contains(err.Error(), "corrupt") {
				t.Fatalf("error %q names neither the graph nor corruption", err)
			}
		})
	}
}
