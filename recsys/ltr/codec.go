package ltr

import (
	"errors"
	"fmt"
	"math"

	"github.com/recsys-engine/recsys/recsys/blob"
)

// The encoding of a Model: the magic "LTRM", the codec version byte, then
// as uvarints the number of features and of trees; each tree is its
// number of nodes and its nodes in order, each node being feature+1 as a
// uvarint (0 at a leaf), for a split its threshold (little-endian float32
// bits), its children's indices within the tree (uvarints) and its gain
// (float64), and last its value (float64).
const (
	codecMagic   = "LTRM"
	codecVersion = 1
	maxFeatures  = 1 << 16
)

var errCorrupt = errors.New("ltr: corrupt model data")

// MarshalBinary encodes the model.
func (m *Model) MarshalBinary() ([]byte, error) {
	e := blob.NewEncoder([]byte(codecMagic))
	e.Byte(codecVersion)
	e.Uvarint(uint64(m.d))
	e.Uvarint(uint64(len(m.roots)))
	for t := range m.roots {
		tree := m.tree(t)
		base := m.roots[t]
		e.Uvarint(uint64(len(tree)))
		for _, n := range tree {
			e.Uvarint(uint64(n.feature + 1))
			if n.feature >= 0 {
				e.Uint32(math.Float32bits(n.threshold))
				e.Uvarint(uint64(n.left - base))
				e.Uvarint(uint64(n.right - base))
				e.Float64(n.gain)
			}
			e.Float64(n.value)
		}
	}
	return e.Bytes(), nil
}

// tree returns the nodes of tree t.
func (m *Model) tree(t int) []node {
	end := len(m.nodes)
	if t+1 < len(m.roots) {
		end = int(m.roots[t+1])
	}
	return m.nodes[m.roots[t]:end]
}

// UnmarshalBinary decodes what MarshalBinary wrote into m. It returns an
// error, leaving m unchanged, on input of another version, truncated or
// trailing bytes, or a model that is not well formed: a split on a
// feature out of range, a threshold, gain or value that is not finite, a
// negative gain, or children that do not make each tree a tree (every
// node but the root the child of exactly one node listed before it).
func (m *Model) UnmarshalBinary(data []byte) error {
	if len(data) < len(codecMagic)+1 || string(data[:len(codecMagic)]) != codecMagic {
		return errCorrupt
	}
	if v := data[len(codecMagic)]; v != codecVersion {
		return fmt.Errorf("ltr: unsupported model encoding version %d", v)
	}
	d := blob.NewDecoder(data[len(codecMagic)+1:], errCorrupt).MinimalUvarints()
	nf := d.Bounded(maxFeatures)
	if d.Err() == nil && nf < 1 {
		d.Fail(nil)
	}
	nt := d.Count(10) // a tree takes at least a count, a leaf's byte and its value
	out := Model{d: nf, roots: make([]int32, 0, nt)}
	var parents []int
	for range nt {
		k := d.Count(9)
		if d.Err() != nil {
			break
		}
		if k < 1 {
			d.Fail(nil)
			break
		}
		base := len(out.nodes)
		out.roots = append(out.roots, int32(base))
		parents = append(parents[:0], make([]int, k)...)
		for i := range k {
			n := node{feature: -1}
			f := d.Uvarint()
			if f > uint64(nf) {
				d.Fail(nil)
			}
			if d.Err() != nil {
				break
			}
			if f > 0 {
				n.feature = int32(f - 1)
				n.threshold = math.Float32frombits(d.Uint32())
				l, r := d.Uvarint(), d.Uvarint()
				n.gain = d.Finite()
				if d.Err() != nil || l <= uint64(i) || r <= uint64(i) || l >= uint64(k) || r >= uint64(k) || l == r ||
					math.IsNaN(float64(n.threshold)) || math.IsInf(float64(n.threshold), 0) || n.gain < 0 {
					d.Fail(nil)
					break
				}
				parents[l]++
				parents[r]++
				n.left, n.right = int32(base+int(l)), int32(base+int(r))
			}
			n.value = d.Finite()
			out.nodes = append(out.nodes, n)
		}
		for i := 1; i < k && d.Err() == nil; i++ {
			if parents[i] != 1 {
				d.Fail(nil)
			}
		}
	}
	if err := d.Finish(); err != nil {
		return err
	}
	*m = out
	return nil
}
