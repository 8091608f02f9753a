package mf

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"recsys/recsys"
)

// codecVersion is the byte after the recsys header (version, model name)
// that every model of this package writes. The layout that follows is the
// model's hyper-parameters as float64s, then the factors: k, |U|, |I| as
// uvarints, a bias flag byte, U, V and the biases as little-endian float64s,
// and the training-row hashes as little-endian uint64s.
const codecVersion = 1

var errCorrupt = errors.New("mf: corrupt model data")

type encoder struct{ b []byte }

func newEncoder(name string, params []float64) *encoder {
	e := &encoder{b: recsys.AppendHeader(nil, name)}
	e.b = append(e.b, codecVersion)
	e.uint(uint64(len(params)))
	for _, v := range params {
		e.float(v)
	}
	return e
}

func (e *encoder) uint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }

func (e *encoder) float(v float64) { e.b = binary.LittleEndian.AppendUint64(e.b, math.Float64bits(v)) }

func (e *encoder) factors(f *factors) {
	e.uint(uint64(f.k))
	e.uint(uint64(f.nUsers))
	e.uint(uint64(f.nItems))
	if f.bias != nil {
		e.b = append(e.b, 1)
	} else {
		e.b = append(e.b, 0)
	}
	for _, a := range [][]float64{f.user, f.item, f.bias} {
		for _, v := range a {
			e.float(v)
		}
	}
	for _, h := range f.hashes {
		e.b = binary.LittleEndian.AppendUint64(e.b, h)
	}
}

type decoder struct {
	b   []byte
	err error
}

// newDecoder checks the header of model name and the codec version and
// reads the hyper-parameters, of which there must be nParams.
func newDecoder(data []byte, name string, nParams int) (*decoder, []float64) {
	rest, err := recsys.ReadHeader(data, name)
	d := &decoder{b: rest, err: err}
	if d.err != nil {
		return d, nil
	}
	if len(d.b) == 0 || d.b[0] != codecVersion {
		d.err = fmt.Errorf("mf: unsupported %s encoding", name)
		return d, nil
	}
	d.b = d.b[1:]
	if n := d.uint(); d.err == nil && n != uint64(nParams) {
		d.err = errCorrupt
	}
	ps := make([]float64, nParams)
	for i := range ps {
		ps[i] = d.float()
	}
	return d, ps
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

// factors reads what encoder.factors wrote; the sizes must fit the data
// that is left, so corrupt input cannot make it allocate without bound.
func (d *decoder) factors() *factors {
	k, m, n := d.uint(), d.uint(), d.uint()
	if d.err != nil || len(d.b) < 1 || d.b[0] > 1 {
		d.err = errCorrupt
		return nil
	}
	hasBias := d.b[0] == 1
	d.b = d.b[1:]
	rest := uint64(len(d.b))
	if k == 0 || k > maxFactors || m > rest/8 || n > rest/8 || (m+n)*k > rest/8 {
		d.err = errCorrupt
		return nil
	}
	cells := (m+n)*k + m // factors and hashes
	if hasBias {
		cells += n
	}
	if cells*8 != rest {
		d.err = errCorrupt
		return nil
	}
	f := &factors{k: int(k), nUsers: int(m), nItems: int(n)}
	f.user = d.floats(int(m * k))
	f.item = d.floats(int(n * k))
	if hasBias {
		f.bias = d.floats(int(n))
	}
	if d.err != nil {
		return nil
	}
	f.hashes = make([]uint64, m)
	for u := range f.hashes {
		f.hashes[u] = binary.LittleEndian.Uint64(d.b[8*u:])
	}
	d.b = d.b[8*m:]
	f.buildIndex()
	return f
}

func (d *decoder) floats(n int) []float64 {
	if d.err != nil || n < 0 || n > len(d.b)/8 {
		if d.err == nil {
			d.err = errCorrupt
		}
		return nil
	}
	out := make([]float64, n)
	for i := range out {
		out[i] = d.float()
	}
	return out
}

// finish reports the first error, or trailing bytes.
func (d *decoder) finish() error {
	if d.err == nil && len(d.b) != 0 {
		d.err = errCorrupt
	}
	return d.err
}
