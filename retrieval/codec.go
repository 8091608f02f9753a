package retrieval

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
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
	b := append([]byte("RMET"), codecVersion)
	b = binary.AppendUvarint(b, uint64(len(m.Method)))
	b = append(b, m.Method...)
	b = binary.AppendUvarint(b, uint64(d))
	b = binary.AppendUvarint(b, uint64(r))
	b = appendFloats(b, m.Mean)
	b = appendFloats(b, m.Scale)
	for i := 0; i < d; i++ {
		b = appendFloats(b, m.L.RawRowView(i))
	}
	return b, nil
}

// UnmarshalBinary decodes a metric written by MarshalBinary.
func (m *Metric) UnmarshalBinary(data []byte) error {
	dec := decoder{b: data}
	dec.magic("RMET")
	method := string(dec.bytes())
	d := dec.count()
	r := dec.count()
	rest := uint64(len(dec.b)) / 8
	if dec.err == nil && (d == 0 || r == 0 || d > rest || r > rest || len(dec.b)%8 != 0 || rest != 2*d+d*r) {
		dec.err = errCorrupt
	}
	if dec.err != nil {
		return dec.err
	}
	mean := dec.floats(int(d))
	scale := dec.floats(int(d))
	l := mat.NewDense(int(d), int(r), dec.floats(int(d*r)))
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
	b := append([]byte("RIDX"), codecVersion)
	b = binary.AppendUvarint(b, uint64(ix.dim))
	b = binary.AppendUvarint(b, uint64(ix.len()))
	return appendFloats(b, ix.data), nil
}

// maxIndexDim is the largest vector dimension an encoded index may claim.
const maxIndexDim = 1 << 20

// UnmarshalBinary decodes an index written by MarshalBinary.
func (ix *Index) UnmarshalBinary(data []byte) error {
	dec := decoder{b: data}
	dec.magic("RIDX")
	dim := dec.count()
	n := dec.count()
	rest := uint64(len(dec.b)) / 8
	// With no rows the data cannot bound dim, so it has its own cap: a
	// corrupt header must not yield an index whose every query vector
	// takes gigabytes.
	if dec.err == nil && (dim == 0 || dim > maxIndexDim || n > rest || len(dec.b)%8 != 0 || rest != dim*n) {
		dec.err = errCorrupt
	}
	if dec.err != nil {
		return dec.err
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.dim = int(dim)
	ix.data = dec.floats(int(dim * n))
	return nil
}

func appendFloats(b []byte, v []float64) []byte {
	for _, x := range v {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
	}
	return b
}

type decoder struct {
	b   []byte
	err error
}

func (d *decoder) magic(m string) {
	if len(d.b) < len(m)+1 || string(d.b[:len(m)]) != m {
		d.err = errCorrupt
		return
	}
	if v := d.b[len(m)]; v != codecVersion {
		d.err = fmt.Errorf("retrieval: format version %d, want %d", v, codecVersion)
		return
	}
	d.b = d.b[len(m)+1:]
}

func (d *decoder) count() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 || n != len(binary.AppendUvarint(nil, v)) { // only minimal encodings
		d.err = errCorrupt
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) bytes() []byte {
	n := d.count()
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)) {
		d.err = errCorrupt
		return nil
	}
	out := append([]byte(nil), d.b[:n]...)
	d.b = d.b[n:]
	return out
}

// floats reads n float64s; the caller has checked the length.
func (d *decoder) floats(n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = math.Float64frombits(binary.LittleEndian.Uint64(d.b[8*i:]))
	}
	d.b = d.b[8*n:]
	return out
}
