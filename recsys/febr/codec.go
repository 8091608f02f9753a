package febr

import (
	"errors"
	"fmt"

	"github.com/recsys-engine/recsys/recsys"
	"github.com/recsys-engine/recsys/recsys/blob"
)

// errCorrupt is the error of model bytes that do not decode.
var errCorrupt = errors.New("febr: corrupt model data")

// newEncoder starts the encoding of model name with the header of every
// encoded model (recsys.AppendHeader).
func newEncoder(name string) *blob.Encoder {
	return blob.NewEncoder(recsys.AppendHeader(nil, name))
}

// newDecoder decodes the bytes after the header of model name, failing
// when data does not start with it (recsys.ReadHeader).
func newDecoder(data []byte, name string) *blob.Decoder {
	rest, err := recsys.ReadHeader(data, name)
	d := blob.NewDecoder(rest, errCorrupt)
	if err != nil {
		d.Fail(err)
	}
	return d
}

// MarshalBinary writes the variant (as the model name), k, λ, the fsSLIM
// constants, θ, the z-score statistics, the item affinity lists (item
// side) and the training matrix (user side).
func (m *Model) MarshalBinary() ([]byte, error) {
	if m.ext == nil {
		return nil, fmt.Errorf("febr: %s is not fitted", m.v.name)
	}
	e := newEncoder(m.v.name)
	e.Uvarint(uint64(m.k))
	e.Float64(m.lambda)
	e.Float64(m.l1)
	e.Float64(m.l2)
	e.Uvarint(uint64(m.ext.nItems))
	e.Uvarint(uint64(m.ext.dim))
	for _, v := range [][]float64{m.theta, m.ext.mean, m.ext.std} {
		for _, f := range v {
			e.Float64(f)
		}
	}
	if m.v.item {
		recsys.WriteNeighbours(e, m.ext.items.fwd)
	}
	if m.v.user {
		recsys.WriteMatrix(e, m.x)
	}
	return e.Bytes(), nil
}

func (m *Model) UnmarshalBinary(data []byte) error {
	d := newDecoder(data, m.v.name)
	k := d.Bounded(1 << 32)
	lambda, l1, l2 := d.Finite(), d.Finite(), d.Finite()
	nItems := d.Bounded(1 << 32)
	dim := d.Bounded(2 * featuresPerSide)
	want := 0
	if m.v.item {
		want += featuresPerSide
	}
	if m.v.user {
		want += featuresPerSide
	}
	if d.Err() == nil && (dim != want || k == 0) {
		return errCorrupt
	}
	vecs := make([][]float64, 3)
	for v := range vecs {
		vecs[v] = make([]float64, dim)
		for f := range vecs[v] {
			vecs[v][f] = d.Finite()
		}
	}
	var items *itemSide
	if m.v.item {
		nb := recsys.ReadNeighbours(d, nItems)
		if d.Err() == nil && nb.Rows() != nItems {
			return errCorrupt
		}
		if d.Err() == nil {
			items = newItemSide(nItems, nb)
		}
	}
	var x *recsys.Matrix
	var users *recsys.UserNeighbourhood
	if m.v.user {
		x = recsys.ReadMatrix(d)
		if d.Err() == nil && x.Items() != nItems {
			return errCorrupt
		}
		if d.Err() == nil {
			users = recsys.NewUserNeighbourhood(x, k, m.v.affinity, nil)
		}
	}
	if err := d.Finish(); err != nil {
		return err
	}
	for _, s := range vecs[2] {
		if s <= 0 {
			return errCorrupt
		}
	}
	ext := newExtractor(k, nItems, items, users)
	ext.setStats(vecs[1], vecs[2])
	m.set(ext, x, k, lambda, l1, l2, vecs[0])
	m.info = Info{}
	return nil
}
