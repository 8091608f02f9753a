package retrieval

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/recsys-engine/recsys/recsys/blob"
)

// Binary layouts (little-endian float64s, uvarint counts):
//
//	Metric: "RMET" 1 | method (len, bytes) | d | m | Mean[d] | Scale[d] | L[d·m] row-major
//	Index:  "RIDX" 1 | dim | n | vectors[n·dim] row-major
const codecVersion = 1

var errCorrupt = errors.New("retrieval: corrupt data")

// MarshalBinary encodes the metric.
func (m *Metric) MarshalBinary() ([]byte, error) {
	d, r := m.L.Dims()
	if d != len(m.Mean) || d != len(m.Scale) {
		return nil, errors.New("retrieval: inconsistent metric")
	}
	e := newEncoder("RMET")
	e.Str(m.Method)
	e.Uvarint(uint64(d))
	e.Uvarint(uint64(r))
	e.Float64s(m.Mean)
	e.Float64s(m.Scale)
	for i := 0; i < d; i++ {
		e.Float64s(m.L.RawRowView(i))
	}
	return e.Bytes(), nil
}

// UnmarshalBinary decodes a metric written by MarshalBinary.
func (m *Metric) UnmarshalBinary(data []byte) error {
	dec := newDecoder(data, "RMET")
	method := dec.Str()
	d := dec.Uvarint()
	r := dec.Uvarint()
	rest := uint64(dec.Len()) / 8
	if dec.Err() == nil && (d == 0 || r == 0 || d > rest || r > rest || dec.Len()%8 != 0 || rest != 2*d+d*r) {
		dec.Fail(nil)
	}
	if err := dec.Err(); err != nil {
		return err
	}
	mean := dec.Float64s(int(d))
	scale := dec.Float64s(int(d))
	l := mat.NewDense(int(d), int(r), dec.Float64s(int(d*r)))
	for _, s := range scale {
		if !(s > 0) || math.IsInf(s, 0) {
			return fmt.Errorf("%w: non-positive scale", errCorrupt)
		}
	}
	*m = Metric{Method: method, Mean: mean, Scale: scale, L: l}
	return nil
}

// MarshalBinary encodes the index.
func (ix *Index) MarshalBinary() ([]byte, error) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	e := newEncoder("RIDX")
	e.Uvarint(uint64(ix.dim))
	e.Uvarint(uint64(ix.len()))
	e.Float64s(ix.data)
	return e.Bytes(), nil
}

// maxIndexDim is the largest vector dimension an encoded index may claim.
const maxIndexDim = 1 << 20

// UnmarshalBinary decodes an index written by MarshalBinary.
func (ix *Index) UnmarshalBinary(data []byte) error {
	dec := newDecoder(data, "RIDX")
	dim := dec.Uvarint()
	n := dec.Uvarint()
	rest := uint64(dec.Len()) / 8
	// With no rows the data cannot bound dim, so it has its own cap: a
	// corrupt header must not yield an index whose every query vector
	// takes gigabytes.
	if dec.Err() == nil && (dim == 0 || dim > maxIndexDim || n > rest || dec.Len()%8 != 0 || rest != dim*n) {
		dec.Fail(nil)
	}
	if err := dec.Err(); err != nil {
		return err
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.dim = int(dim)
	ix.data = dec.Float64s(int(dim * n))
	return nil
}

// newEncoder starts an encoding with magic and the format version.
func newEncoder(magic string) *blob.Encoder {
	e := blob.NewEncoder([]byte(magic))
	e.Byte(codecVersion)
	return e
}

// newDecoder checks magic and the format version. Its uvarints must be
// minimal, so that whatever decodes re-encodes to the same bytes.
func newDecoder(data []byte, magic string) *blob.Decoder {
	d := blob.NewDecoder(data, errCorrupt).MinimalUvarints()
	if string(d.Raw(len(magic))) != magic {
		d.Fail(nil)
		return d
	}
	if v := d.Byte(); d.Err() == nil && v != codecVersion {
		d.Fail(fmt.Errorf("retrieval: format version %d, want %d", v, codecVersion))
	}
	return d
}
