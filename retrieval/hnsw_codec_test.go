package retrieval

import (
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
)

// builtGraph builds an HNSW graph over n clustered points in m dimensions
// with two workers, so the links are not those of a sequential build.
func builtGraph(t *testing.T, n, m int) (*Index, *HNSW) {
	t.Helper()
	ix, err := BuildIndex(clusteredVectors(rand.New(rand.NewPCG(7, 8)), n, m, 20))
	if err != nil {
		t.Fatal(err)
	}
	h, err := BuildHNSW(ix, HNSWOptions{Seed: 3, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	return ix, h
}

// TestHNSWGraph_roundTrip: the decoded graph, attached to the same
// vectors, answers every query (by vector and by id, filtered or not) with
// the same neighbours and distances as the graph that was built, and
// re-encodes to the same bytes.
func TestHNSWGraph_roundTrip(t *testing.T) {
	ix, h := builtGraph(t, 3000, 8)
	b, err := h.Graph().MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var g HNSWGraph
	if err := g.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	if g.Len() != 3000 {
		t.Fatalf("decoded %d nodes, want 3000", g.Len())
	}
	again, _ := g.MarshalBinary()
	if !slices.Equal(again, b) {
		t.Fatal("the decoded graph encodes to other bytes")
	}
	got, err := AttachHNSW(ix, &g)
	if err != nil {
		t.Fatal(err)
	}
	odd := func(id int) bool { return id%2 == 1 }
	rng := rand.New(rand.NewPCG(9, 9))
	for q := range 200 {
		v := clusteredVectors(rng, 1, 8, 20)[0]
		if a, w := got.Search(v, 10, nil), h.Search(v, 10, nil); !slices.Equal(a, w) {
			t.Fatalf("query %d: decoded graph answers %v, built %v", q, a, w)
		}
		if a, w := got.Search(v, 10, odd), h.Search(v, 10, odd); !slices.Equal(a, w) {
			t.Fatalf("filtered query %d: decoded graph answers %v, built %v", q, a, w)
		}
		if a, w := got.SearchID(q*7, 10, nil), h.SearchID(q*7, 10, nil); len(a) != 10 || !slices.Equal(a, w) {
			t.Fatalf("item %d: decoded graph answers %v, built %v", q*7, a, w)
		}
	}
	// The graph searches the vectors it is given: attached elsewhere, the
	// sizes must agree.
	other, _ := BuildIndex(clusteredVectors(rng, 2999, 8, 20))
	if _, err := AttachHNSW(other, &g); err == nil {
		t.Fatal("a graph of 3000 nodes attached to an index of 2999")
	}
}

// TestHNSWGraph_corrupt: truncations, a link past the last node, a link
// to a node that does not reach the link's layer, a count larger than its
// row, an entry point below the top layer and a bad magic are all
// rejected with an error, never a panic, and leave the receiver as it was.
func TestHNSWGraph_corrupt(t *testing.T) {
	_, h := builtGraph(t, 500, 4)
	good, _ := h.Graph().MarshalBinary()
	header := 4 + 1 + 1 + 1 + 1 + 8 + 2 + 1 // magic, version, M (16), ef (100), ef (64), seed, n (500), dim
	entryLen := len(binaryUvarint(uint64(h.entry)))
	levels := header + entryLen
	l0 := levels + 500
	m0 := 32
	// Find a node at level 0 and a node with an upper row.
	var low, high int = -1, -1
	for i, l := range h.level {
		if l == 0 && low < 0 && i > 0 {
			low = i
		}
		if l > 0 && high < 0 {
			high = i
		}
	}
	if low < 0 || high < 0 {
		t.Fatal("the generated graph lacks a node at level 0 or above it")
	}
	firstUp := l0 + 4*500*(m0+1) // node high's layer-1 row, the first upper row
	at := func(o int) int32 { return int32(binary.LittleEndian.Uint32(good[o:])) }
	if at(l0) != h.l0[0] || at(l0+4) != h.l0[1] || at(firstUp) != h.up[0] || at(firstUp+4) != h.up[1] || good[levels+high] != h.level[high] {
		t.Fatal("the offsets of this test do not match the layout")
	}
	put := func(b []byte, at int, v uint32) []byte {
		c := slices.Clone(b)
		binary.LittleEndian.PutUint32(c[at:], v)
		return c
	}
	cases := map[string][]byte{
		"empty":            nil,
		"magic":            append([]byte("XHNS"), good[4:]...),
		"truncated header": good[:header-3],
		"truncated links":  good[:len(good)-1],
		"trailing byte":    append(slices.Clone(good), 0),
		"link past n":      put(good, l0+4, 500),
		"negative link":    put(good, l0+4, 0xFFFFFFFF),
		"count past row":   put(good, l0, uint32(m0+1)),
		"link below layer": put(good, firstUp+4, uint32(low)),
		"level past 30":    func() []byte { c := slices.Clone(good); c[levels+high] = 31; return c }(),
	}
	if h.level[h.entry] > 0 {
		// Lowering the entry point's level leaves it below the top layer
		// (and shortens the upper rows).
		c := slices.Clone(good)
		c[levels+int(h.entry)] = 0
		cases["entry below top"] = c
	}
	for name, b := range cases {
		t.Run(name, func(t *testing.T) {
			g := HNSWGraph{n: 7}
			err := g.UnmarshalBinary(b)
			if err == nil {
				t.Fatal("accepted")
			}
			if !errors.Is(err, errCorruptHNSW) {
				t.Fatalf("error %v, want the corrupt-graph error", err)
			}
			if g.n != 7 {
				t.Fatal("a failed decode changed the receiver")
			}
		})
	}
	// The good bytes decode (the cases above differ from them only as
	// named).
	var g HNSWGraph
	if err := g.UnmarshalBinary(good); err != nil {
		t.Fatal(err)
	}
}

func binaryUvarint(v uint64) []byte { return binary.AppendUvarint(nil, v) }

// TestIndex_fingerprint: the fingerprint depends on every vector's bits
// and the dimension, not on anything else.
func TestIndex_fingerprint(t *testing.T) {
	vs := [][]float64{{1, 2}, {3, 4}, {5, 6}}
	a, _ := BuildIndex(vs)
	b, _ := BuildIndex([][]float64{{1, 2}, {3, 4}, {5, 6}})
	if a.Fingerprint() != b.Fingerprint() {
		t.Fatal("equal vectors, different fingerprints")
	}
	c, _ := BuildIndex([][]float64{{1, 2}, {3, 4}, {5, 6.000000000000001}})
	if a.Fingerprint() == c.Fingerprint() {
		t.Fatal("a changed vector kept the fingerprint")
	}
	d, _ := BuildIndex([][]float64{{1, 2, 3}, {4, 5, 6}})
	if a.Fingerprint() == d.Fingerprint() {
		t.Fatal("the same numbers in another dimension kept the fingerprint")
	}
}
