package retrieval

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/recsys-engine/recsys/recsys/blob"
)

// Binary layout of an HNSW graph's links (HNSWGraph; little-endian, uvarint
// counts):
//
//	"RHNS" 1 | M | EfConstruction | EfSearch | Seed (uint64) | n | dim | entry |
//	level[n] (bytes) | l0[n·(2M+1)] (uint32) | up[Σlevel·(M+1)] (uint32)
//
// The rows are HNSW's: a link count followed by the slots.
const hnswCodecVersion = 1

var errCorruptHNSW = errors.New("retrieval: corrupt HNSW graph")

// maxHNSWM bounds M in a decoded graph: the default is 16, and a larger
// value from corrupt data must not size the rows.
const maxHNSWM = 1024

// HNSWGraph is an HNSW graph without its vectors: the links, levels and
// entry point that a build computes, which is what is worth persisting.
// AttachHNSW joins it to the index of the vectors it was built on.
type HNSWGraph struct {
	opt   HNSWOptions
	n     int
	dim   int
	level []uint8
	l0    []int32
	up    []int32
	entry int32
}

// Graph returns h's links, sharing h's storage (h is read-only once
// built).
func (h *HNSW) Graph() *HNSWGraph {
	return &HNSWGraph{opt: h.opt, n: h.n, dim: h.dim, level: h.level, l0: h.l0, up: h.up, entry: h.entry}
}

// Len is the number of nodes.
func (g *HNSWGraph) Len() int { return g.n }

// Dim is the dimension of the vectors it was built on.
func (g *HNSWGraph) Dim() int { return g.dim }

// MarshalBinary encodes the graph.
func (g *HNSWGraph) MarshalBinary() ([]byte, error) {
	e := blob.NewEncoder([]byte("RHNS"))
	e.Byte(hnswCodecVersion)
	e.Uvarint(uint64(g.opt.M))
	e.Uvarint(uint64(g.opt.EfConstruction))
	e.Uvarint(uint64(g.opt.EfSearch))
	e.Uint64(g.opt.Seed)
	e.Uvarint(uint64(g.n))
	e.Uvarint(uint64(g.dim))
	e.Uvarint(uint64(g.entry))
	e.Raw(g.level)
	for _, v := range g.l0 {
		e.Uint32(uint32(v))
	}
	for _, v := range g.up {
		e.Uint32(uint32(v))
	}
	return e.Bytes(), nil
}

// UnmarshalBinary decodes a graph written by MarshalBinary and checks
// that searching it cannot go out of bounds: every count fits its row,
// every link names a node that reaches the link's layer, and the entry
// point is on the top layer.
func (g *HNSWGraph) UnmarshalBinary(data []byte) error {
	d := blob.NewDecoder(data, errCorruptHNSW).MinimalUvarints()
	if string(d.Raw(4)) != "RHNS" {
		return errCorruptHNSW
	}
	if v := d.Byte(); d.Err() == nil && v != hnswCodecVersion {
		return fmt.Errorf("retrieval: HNSW layout version %d, want %d", v, hnswCodecVersion)
	}
	var out HNSWGraph
	out.opt.M = d.Bounded(maxHNSWM)
	out.opt.EfConstruction = d.Bounded(math.MaxInt32)
	out.opt.EfSearch = d.Bounded(math.MaxInt32)
	out.opt.Seed = d.Uint64()
	out.n = d.Count(1) // each node has at least its level byte
	out.dim = d.Bounded(math.MaxInt32)
	entry := d.Bounded(math.MaxInt32)
	if err := d.Err(); err != nil {
		return err
	}
	if out.opt.M < 2 || out.opt.EfConstruction < 1 || out.opt.EfSearch < 1 || out.n < 1 || out.dim < 1 || entry >= out.n {
		return errCorruptHNSW
	}
	out.entry = int32(entry)
	m, m0 := out.opt.M, 2*out.opt.M
	out.level = append([]uint8(nil), d.Raw(out.n)...)
	rows, top := 0, 0
	for _, l := range out.level {
		if l > 30 {
			return errCorruptHNSW
		}
		rows += int(l)
		top = max(top, int(l))
	}
	if int(out.level[out.entry]) != top {
		return errCorruptHNSW
	}
	out.l0 = int32s(d, out.n, m0+1)
	out.up = int32s(d, rows, m+1)
	if err := d.Finish(); err != nil {
		return err
	}
	// Rows of the upper layers follow the nodes' order, as BuildHNSW lays
	// them out; a link on layer l must name a node with a row there.
	check := func(r []int32, slots, l int) bool {
		c := int(r[0])
		if c < 0 || c > slots {
			return false
		}
		for _, v := range r[1 : 1+c] {
			if v < 0 || int(v) >= out.n || int(out.level[v]) < l {
				return false
			}
		}
		return true
	}
	for i := range out.n {
		if !check(out.l0[i*(m0+1):(i+1)*(m0+1)], m0, 0) {
			return errCorruptHNSW
		}
	}
	o := 0
	for _, lv := range out.level {
		for l := 1; l <= int(lv); l++ {
			if !check(out.up[o:o+m+1], m, l) {
				return errCorruptHNSW
			}
			o += m + 1
		}
	}
	*g = out
	return nil
}

// int32s reads rows·width uint32s as int32s, failing without allocating
// when the data is too short.
func int32s(d *blob.Decoder, rows, width int) []int32 {
	if d.Err() != nil || rows > d.Len()/(4*width) {
		d.Fail(nil)
		return nil
	}
	raw := d.Raw(4 * rows * width)
	out := make([]int32, rows*width)
	for k := range out {
		out[k] = int32(binary.LittleEndian.Uint32(raw[4*k:]))
	}
	return out
}

// AttachHNSW returns the HNSW index of graph g over the vectors of ix,
// which must be the vectors g was built on (Fingerprint tells): it checks
// only that the sizes agree. Like BuildHNSW's, the result shares ix's
// storage.
func AttachHNSW(ix *Index, g *HNSWGraph) (*HNSW, error) {
	ix.mu.RLock()
	data, n, dim := ix.data, ix.len(), ix.dim
	ix.mu.RUnlock()
	if n != g.n || dim != g.dim {
		return nil, fmt.Errorf("retrieval: an HNSW graph of %d items of dimension %d for an index of %d of dimension %d", g.n, g.dim, n, dim)
	}
	h := &HNSW{opt: g.opt, dim: dim, data: data, n: n, m0: 2 * g.opt.M, v32: make([]float32, n*dim),
		l0: g.l0, up: g.up, level: g.level, upper: make([]int32, n), entry: g.entry, top: int(g.level[g.entry])}
	for k, x := range data[:n*dim] {
		h.v32[k] = float32(x)
	}
	rows := 0
	for i, l := range g.level {
		h.upper[i] = -1
		if l > 0 {
			h.upper[i] = int32(rows * (g.opt.M + 1))
			rows += int(l)
		}
	}
	h.scratch.New = func() any { return &scratch{} }
	return h, nil
}

// Fingerprint is a SHA-256 digest of the index's dimension and vectors (their
// float64 bits, in id order): equal fingerprints mean a graph built on one
// index searches the other as it searched the first.
func (ix *Index) Fingerprint() [sha256.Size]byte {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	h := sha256.New()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(ix.dim))
	h.Write(b[:])
	buf := make([]byte, 0, 8*1024)
	for _, x := range ix.data[:ix.len()*ix.dim] {
		buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(x))
		if len(buf) == cap(buf) {
			h.Write(buf)
			buf = buf[:0]
		}
	}
	h.Write(buf)
	var out [sha256.Size]byte
	h.Sum(out[:0])
	return out
}
