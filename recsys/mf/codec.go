package mf

import (
	"errors"
	"fmt"

	"github.com/recsys-engine/recsys/recsys"
	"github.com/recsys-engine/recsys/recsys/blob"
)

// codecVersion is the byte after the recsys header (version, model name)
// that every model of this package writes. The layout that follows is the
// model's hyper-parameters as float64s, then the factors: k, |U|, |I| as
// uvarints, a bias flag byte, U, V and the biases as little-endian float64s,
// and the training-row hashes as little-endian uint64s.
const codecVersion = 1

var errCorrupt = errors.New("mf: corrupt model data")

// newEncoder starts an encoding of model name with its header and its
// hyper-parameters.
func newEncoder(name string, params []float64) *blob.Encoder {
	e := blob.NewEncoder(recsys.AppendHeader(nil, name))
	e.Byte(codecVersion)
	e.Uvarint(uint64(len(params)))
	e.Float64s(params)
	return e
}

// writeFactors writes f after the parameters.
func writeFactors(e *blob.Encoder, f *factors) {
	e.Uvarint(uint64(f.k))
	e.Uvarint(uint64(f.nUsers))
	e.Uvarint(uint64(f.nItems))
	if f.bias != nil {
		e.Byte(1)
	} else {
		e.Byte(0)
	}
	e.Float64s(f.user)
	e.Float64s(f.item)
	e.Float64s(f.bias)
	e.Uint64s(f.hashes)
}

// newDecoder checks the header of model name and the codec version and
// reads the hyper-parameters, of which there must be nParams.
func newDecoder(data []byte, name string, nParams int) (*blob.Decoder, []float64) {
	rest, err := recsys.ReadHeader(data, name)
	d := blob.NewDecoder(rest, errCorrupt)
	if err != nil {
		d.Fail(err)
		return d, nil
	}
	if d.Len() == 0 || d.Byte() != codecVersion {
		d.Fail(fmt.Errorf("mf: unsupported %s encoding", name))
		return d, nil
	}
	if n := d.Uvarint(); d.Err() == nil && n != uint64(nParams) {
		d.Fail(nil)
	}
	ps := make([]float64, nParams)
	for i := range ps {
		ps[i] = d.Finite()
	}
	return d, ps
}

// readFactors reads what writeFactors wrote; the sizes must fit the data
// that is left, so corrupt input cannot make it allocate without bound.
func readFactors(d *blob.Decoder) *factors {
	k, m, n := d.Uvarint(), d.Uvarint(), d.Uvarint()
	flag := d.Byte()
	if d.Err() != nil || flag > 1 {
		d.Fail(nil)
		return nil
	}
	hasBias := flag == 1
	rest := uint64(d.Len())
	if k == 0 || k > maxFactors || m > rest/8 || n > rest/8 || (m+n)*k > rest/8 {
		d.Fail(nil)
		return nil
	}
	cells := (m+n)*k + m // factors and hashes
	if hasBias {
		cells += n
	}
	if cells*8 != rest {
		d.Fail(nil)
		return nil
	}
	f := &factors{k: int(k), nUsers: int(m), nItems: int(n)}
	f.user = d.Finites(int(m * k))
	f.item = d.Finites(int(n * k))
	if hasBias {
		f.bias = d.Finites(int(n))
	}
	f.hashes = d.Uint64s(int(m))
	if d.Err() != nil {
		return nil
	}
	f.buildIndex()
	return f
}

// marshalFactors encodes a model that is its parameters and its factors
// (BPR, WRMF).
func marshalFactors(name string, params []float64, f *factors) []byte {
	e := newEncoder(name, params)
	writeFactors(e, f)
	return e.Bytes()
}

// unmarshalFactors decodes what marshalFactors wrote, with nParams
// parameters.
func unmarshalFactors(data []byte, name string, nParams int) ([]float64, *factors, error) {
	d, ps := newDecoder(data, name, nParams)
	f := readFactors(d)
	if err := d.Finish(); err != nil {
		return nil, nil, err
	}
	return ps, f, nil
}
