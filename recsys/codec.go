package recsys

import (
	"errors"
	"fmt"
	"math"

	"github.com/recsys-engine/recsys/recsys/blob"
)

// formatVersion is the first byte of every encoded model. The layout that
// follows is: the model name (uvarint length + bytes), then the model's own
// fields as uvarints, little-endian float64s and length-prefixed arrays
// (package blob).
const formatVersion = 1

var errCorrupt = errors.New("recsys: corrupt model data")

// newEncoder starts an encoding of model name with its header.
func newEncoder(name string) *blob.Encoder {
	e := blob.NewEncoder([]byte{formatVersion})
	e.Str(name)
	return e
}

// peekName reads the version byte and the model name.
func peekName(data []byte) (string, error) {
	d := blob.NewDecoder(data, errCorrupt)
	name := readHeader(d)
	return name, d.Err()
}

// readHeader reads the version byte and the model name.
func readHeader(d *blob.Decoder) string {
	if v := d.Byte(); d.Err() == nil && v != formatVersion {
		d.Fail(fmt.Errorf("recsys: model format version %d, want %d", v, formatVersion))
	}
	return d.Str()
}

// newDecoder checks the version byte and that the data holds model name.
func newDecoder(data []byte, name string) *blob.Decoder {
	d := blob.NewDecoder(data, errCorrupt)
	if got := readHeader(d); d.Err() == nil && got != name {
		d.Fail(fmt.Errorf("recsys: data holds model %q, not %q", got, name))
	}
	return d
}

// WriteNeighbours writes neighbour lists: the row count, the row lengths,
// then the entries (ReadNeighbours reads them back).
func WriteNeighbours(e *blob.Encoder, nb *Neighbours) {
	e.Uvarint(uint64(nb.Rows()))
	for r := 0; r < nb.Rows(); r++ {
		e.Uvarint(uint64(len(nb.Row(r))))
	}
	for r := 0; r < nb.Rows(); r++ {
		for _, x := range nb.Row(r) {
			e.Uint32(x.Index)
			e.Float64(x.Value)
		}
	}
}

// ReadNeighbours reads lists written by WriteNeighbours whose indices must
// be below nCols and values finite, failing d otherwise.
func ReadNeighbours(d *blob.Decoder, nCols int) *Neighbours {
	rows := d.Count(1)
	if d.Err() != nil {
		return nil
	}
	ptr := make([]int, rows+1)
	for r := 0; r < rows; r++ {
		ptr[r+1] = ptr[r] + d.Count(12)
	}
	if d.Err() != nil || ptr[rows] > d.Len()/12 {
		d.Fail(nil)
		return nil
	}
	ent := make([]Neighbour, ptr[rows])
	for k := range ent {
		ent[k].Index = d.Uint32()
		ent[k].Value = d.Float64()
		if int(ent[k].Index) >= nCols || math.IsNaN(ent[k].Value) || math.IsInf(ent[k].Value, 0) {
			d.Fail(nil)
			return nil
		}
	}
	return &Neighbours{ptr: ptr, ent: ent}
}

// WriteMatrix writes a matrix: the shape, the row lengths, the column
// lengths (which bound the shape by the data size when decoding) and the
// column indices (ReadMatrix reads it back).
func WriteMatrix(e *blob.Encoder, x *Matrix) {
	e.Uvarint(uint64(x.nUsers))
	e.Uvarint(uint64(x.nItems))
	for u := 0; u < x.nUsers; u++ {
		e.Uvarint(uint64(x.UserCount(u)))
	}
	for i := 0; i < x.nItems; i++ {
		e.Uvarint(uint64(x.ItemCount(i)))
	}
	e.Uint32s(x.byUser.idx)
}

// ReadMatrix reads a matrix written by WriteMatrix and checks that its
// rows are strictly ascending and in range and that its column lengths
// match, failing d otherwise. A matrix equal to one a loaded model holds
// is that one (intern), so that models of one training share it.
func ReadMatrix(d *blob.Decoder) *Matrix {
	nUsers := d.Count(1)
	nItems := d.Count(1)
	if d.Err() != nil || nUsers+nItems > d.Len() {
		d.Fail(nil)
		return nil
	}
	ptr := make([]int, nUsers+1)
	for u := 0; u < nUsers; u++ {
		ptr[u+1] = ptr[u] + d.Count(4)
	}
	colLen := make([]int, nItems)
	for i := range colLen {
		colLen[i] = d.Count(4)
	}
	if d.Err() != nil {
		return nil
	}
	if raw := d.Peek(4 * ptr[nUsers]); raw != nil {
		if x := internedMatrix(ptr, colLen, raw); x != nil {
			d.Raw(len(raw))
			return x
		}
	}
	idx := d.Uint32s(ptr[nUsers])
	if d.Err() != nil {
		return nil
	}
	for u := 0; u < nUsers; u++ {
		for k := ptr[u]; k < ptr[u+1]; k++ {
			if int(idx[k]) >= nItems || (k > ptr[u] && idx[k] <= idx[k-1]) {
				d.Fail(nil)
				return nil
			}
		}
	}
	x := newMatrixCSR(nUsers, nItems, csr{ptr: ptr, idx: idx})
	for i, n := range colLen {
		if x.ItemCount(i) != n {
			d.Fail(nil)
			return nil
		}
	}
	return intern(x)
}
