package recsys

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// formatVersion is the first byte of every encoded model. The layout that
// follows is: the model name (uvarint length + bytes), then the model's own
// fields as uvarints, little-endian float64s and length-prefixed arrays.
const formatVersion = 1

var errCorrupt = errors.New("recsys: corrupt model data")

type encoder struct{ b []byte }

func newEncoder(name string) *encoder {
	e := &encoder{b: []byte{formatVersion}}
	e.uint(uint64(len(name)))
	e.b = append(e.b, name...)
	return e
}

func (e *encoder) uint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }

func (e *encoder) float(v float64) { e.b = binary.LittleEndian.AppendUint64(e.b, math.Float64bits(v)) }

func (e *encoder) uint32s(v []uint32) {
	e.uint(uint64(len(v)))
	for _, x := range v {
		e.b = binary.LittleEndian.AppendUint32(e.b, x)
	}
}

// neighbours writes the row count, the row lengths, then the entries.
func (e *encoder) neighbours(nb *Neighbours) {
	e.uint(uint64(nb.Rows()))
	for r := 0; r < nb.Rows(); r++ {
		e.uint(uint64(nb.ptr[r+1] - nb.ptr[r]))
	}
	for _, x := range nb.ent {
		e.b = binary.LittleEndian.AppendUint32(e.b, x.Index)
		e.float(x.Value)
	}
}

// matrix writes the shape, the row lengths, the column lengths (which
// bound the shape by the data size when decoding) and the column indices.
func (e *encoder) matrix(x *Matrix) {
	e.uint(uint64(x.nUsers))
	e.uint(uint64(x.nItems))
	for u := 0; u < x.nUsers; u++ {
		e.uint(uint64(x.UserCount(u)))
	}
	for i := 0; i < x.nItems; i++ {
		e.uint(uint64(x.ItemCount(i)))
	}
	for _, i := range x.byUser.idx {
		e.b = binary.LittleEndian.AppendUint32(e.b, i)
	}
}

type decoder struct {
	b   []byte
	err error
}

// peekName reads the version byte and the model name.
func peekName(data []byte) (string, error) {
	d := &decoder{b: data}
	name := d.header()
	return name, d.err
}

func (d *decoder) header() string {
	if len(d.b) == 0 {
		d.err = errCorrupt
		return ""
	}
	if d.b[0] != formatVersion {
		d.err = fmt.Errorf("recsys: model format version %d, want %d", d.b[0], formatVersion)
		return ""
	}
	d.b = d.b[1:]
	n := d.count(1)
	if d.err != nil {
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

// newDecoder checks the version byte and that the data holds model name.
func newDecoder(data []byte, name string) *decoder {
	d := &decoder{b: data}
	if got := d.header(); d.err == nil && got != name {
		d.err = fmt.Errorf("recsys: data holds model %q, not %q", got, name)
	}
	return d
}

func (d *decoder) uint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = errCorrupt
		return 0
	}
	d.b = d.b[n:]
	return v
}

// count reads a length whose elements take at least size bytes each, and
// rejects one the remaining data cannot hold.
func (d *decoder) count(size int) int {
	v := d.uint()
	if d.err == nil && v > uint64(len(d.b)/size) {
		d.err = errCorrupt
		return 0
	}
	return int(v)
}

// bounded reads an integer that must be at most limit.
func (d *decoder) bounded(limit uint64) int {
	v := d.uint()
	if d.err == nil && v > limit {
		d.err = errCorrupt
		return 0
	}
	return int(v)
}

func (d *decoder) float() float64 {
	if d.err != nil {
		return 0
	}
	if len(d.b) < 8 {
		d.err = errCorrupt
		return 0
	}
	v := math.Float64frombits(binary.LittleEndian.Uint64(d.b))
	d.b = d.b[8:]
	if math.IsNaN(v) || math.IsInf(v, 0) {
		d.err = errCorrupt
	}
	return v
}

func (d *decoder) uint32s() []uint32 {
	n := d.count(4)
	if d.err != nil {
		return nil
	}
	out := make([]uint32, n)
	for k := range out {
		out[k] = binary.LittleEndian.Uint32(d.b[4*k:])
	}
	d.b = d.b[4*n:]
	return out
}

// neighbours reads lists whose indices must be below nCols.
func (d *decoder) neighbours(nCols int) *Neighbours {
	rows := d.count(1)
	if d.err != nil {
		return nil
	}
	ptr := make([]int, rows+1)
	for r := 0; r < rows; r++ {
		ptr[r+1] = ptr[r] + d.count(12)
	}
	if d.err != nil || ptr[rows] > len(d.b)/12 {
		d.err = errCorrupt
		return nil
	}
	ent := make([]Neighbour, ptr[rows])
	for k := range ent {
		ent[k].Index = binary.LittleEndian.Uint32(d.b[12*k:])
		ent[k].Value = math.Float64frombits(binary.LittleEndian.Uint64(d.b[12*k+4:]))
		if int(ent[k].Index) >= nCols || math.IsNaN(ent[k].Value) || math.IsInf(ent[k].Value, 0) {
			d.err = errCorrupt
			return nil
		}
	}
	d.b = d.b[12*len(ent):]
	return &Neighbours{ptr: ptr, ent: ent}
}

// matrix reads a matrix and checks that its rows are strictly ascending and
// in range and that its column lengths match.
func (d *decoder) matrix() *Matrix {
	nUsers := d.count(1)
	nItems := d.count(1)
	if d.err != nil || nUsers+nItems > len(d.b) {
		d.err = errCorrupt
		return nil
	}
	ptr := make([]int, nUsers+1)
	for u := 0; u < nUsers; u++ {
		ptr[u+1] = ptr[u] + d.count(4)
	}
	colLen := make([]int, nItems)
	for i := range colLen {
		colLen[i] = d.count(4)
	}
	if d.err != nil || ptr[nUsers] > len(d.b)/4 {
		d.err = errCorrupt
		return nil
	}
	idx := make([]uint32, ptr[nUsers])
	for k := range idx {
		idx[k] = binary.LittleEndian.Uint32(d.b[4*k:])
	}
	d.b = d.b[4*len(idx):]
	for u := 0; u < nUsers; u++ {
		for k := ptr[u]; k < ptr[u+1]; k++ {
			if int(idx[k]) >= nItems || (k > ptr[u] && idx[k] <= idx[k-1]) {
				d.err = errCorrupt
				return nil
			}
		}
	}
	x := newMatrixCSR(nUsers, nItems, csr{ptr: ptr, idx: idx})
	for i, n := range colLen {
		if x.ItemCount(i) != n {
			d.err = errCorrupt
			return nil
		}
	}
	return x
}

// finish reports the first error, or trailing garbage.
func (d *decoder) finish() error {
	if d.err == nil && len(d.b) != 0 {
		d.err = errCorrupt
	}
	return d.err
}
