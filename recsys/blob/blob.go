// Package blob writes and reads the binary layouts of the persisted models
// (recsys, recsys/mf, retrieval): uvarint counts, little-endian fixed-width
// numbers and length-prefixed strings, appended by an Encoder and read back
// by a Decoder.
//
// A Decoder is for untrusted bytes (a damaged database record, a fuzzer):
// its first failure sticks and every later read returns zero values, so a
// caller checks once at the end (Finish); and every count it hands out is
// bounded by the bytes left, so a corrupt size can never make the caller
// allocate more than a small multiple of the input.
package blob

import (
	"encoding/binary"
	"math"
)

// Encoder appends values to a byte slice.
type Encoder struct{ b []byte }

// NewEncoder appends to b (which may be nil or hold a header already).
func NewEncoder(b []byte) *Encoder { return &Encoder{b: b} }

// Bytes returns what has been written.
func (e *Encoder) Bytes() []byte { return e.b }

// Byte writes one byte.
func (e *Encoder) Byte(v byte) { e.b = append(e.b, v) }

// Raw writes p as it is, with no length.
func (e *Encoder) Raw(p []byte) { e.b = append(e.b, p...) }

// Uvarint writes v as a (minimal) unsigned varint.
func (e *Encoder) Uvarint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }

// Str writes the length of s as a uvarint, then its bytes.
func (e *Encoder) Str(s string) {
	e.Uvarint(uint64(len(s)))
	e.b = append(e.b, s...)
}

// Uint32 writes v in 4 little-endian bytes.
func (e *Encoder) Uint32(v uint32) { e.b = binary.LittleEndian.AppendUint32(e.b, v) }

// Uint64 writes v in 8 little-endian bytes.
func (e *Encoder) Uint64(v uint64) { e.b = binary.LittleEndian.AppendUint64(e.b, v) }

// Float64 writes the IEEE 754 bits of v in 8 little-endian bytes.
func (e *Encoder) Float64(v float64) { e.Uint64(math.Float64bits(v)) }

// Uint32s writes the values of v, with no length.
func (e *Encoder) Uint32s(v []uint32) {
	for _, x := range v {
		e.Uint32(x)
	}
}

// Uint64s writes the values of v, with no length.
func (e *Encoder) Uint64s(v []uint64) {
	for _, x := range v {
		e.Uint64(x)
	}
}

// Float64s writes the values of v, with no length.
func (e *Encoder) Float64s(v []float64) {
	for _, x := range v {
		e.Float64(x)
	}
}

// Decoder reads what an Encoder wrote. Every failure is reported as the
// error given to NewDecoder (the caller's "corrupt data" error, so that
// messages name the package) unless the caller sets its own with Fail.
type Decoder struct {
	b       []byte
	err     error
	corrupt error
	minimal bool
}

// NewDecoder reads data; corrupt is the error of malformed input.
func NewDecoder(data []byte, corrupt error) *Decoder {
	return &Decoder{b: data, corrupt: corrupt}
}

// MinimalUvarints makes the decoder reject uvarints in more bytes than
// their value needs, which an Encoder never writes. A format that promises
// that whatever decodes re-encodes to the same bytes needs it.
func (d *Decoder) MinimalUvarints() *Decoder {
	d.minimal = true
	return d
}

// Err is the first failure, or nil.
func (d *Decoder) Err() error { return d.err }

// Fail records err unless an earlier failure is recorded; a nil err means
// the decoder's corrupt error.
func (d *Decoder) Fail(err error) {
	if d.err != nil {
		return
	}
	if err == nil {
		err = d.corrupt
	}
	d.err = err
	d.b = nil
}

// Len is the number of bytes left.
func (d *Decoder) Len() int { return len(d.b) }

// Rest returns the bytes left (not a copy) and consumes them.
func (d *Decoder) Rest() []byte {
	out := d.b
	d.b = nil
	return out
}

// Peek returns the next n bytes (not a copy) without consuming them, nil
// when fewer are left or the decoder has failed.
func (d *Decoder) Peek(n int) []byte {
	if d.err != nil || n < 0 || n > len(d.b) {
		return nil
	}
	return d.b[:n:n]
}

// Finish returns the first failure, or the corrupt error when bytes are
// left over.
func (d *Decoder) Finish() error {
	if d.err == nil && len(d.b) != 0 {
		d.Fail(nil)
	}
	return d.err
}

// take consumes n bytes, or fails when fewer are left.
func (d *Decoder) take(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || n > len(d.b) {
		d.Fail(nil)
		return nil
	}
	out := d.b[:n:n]
	d.b = d.b[n:]
	return out
}

// Byte reads one byte.
func (d *Decoder) Byte() byte {
	p := d.take(1)
	if p == nil {
		return 0
	}
	return p[0]
}

// Raw reads n bytes; the result shares the decoder's data.
func (d *Decoder) Raw(n int) []byte { return d.take(n) }

// Uvarint reads an unsigned varint.
func (d *Decoder) Uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 || (d.minimal && n != uvarintLen(v)) {
		d.Fail(nil)
		return 0
	}
	d.b = d.b[n:]
	return v
}

func uvarintLen(v uint64) int {
	n := 1
	for ; v >= 0x80; v >>= 7 {
		n++
	}
	return n
}

// Count reads a uvarint count of elements that take at least size bytes
// each, and fails on one the bytes left cannot hold: so a count from
// corrupt data cannot size an allocation beyond the input.
func (d *Decoder) Count(size int) int {
	v := d.Uvarint()
	if d.err == nil && v > uint64(len(d.b)/size) {
		d.Fail(nil)
		return 0
	}
	return int(v)
}

// Bounded reads a uvarint that must be at most limit.
func (d *Decoder) Bounded(limit uint64) int {
	v := d.Uvarint()
	if d.err == nil && v > limit {
		d.Fail(nil)
		return 0
	}
	return int(v)
}

// Str reads a uvarint length and that many bytes.
func (d *Decoder) Str() string { return string(d.take(d.Count(1))) }

// Uint32 reads 4 little-endian bytes.
func (d *Decoder) Uint32() uint32 {
	p := d.take(4)
	if p == nil {
		return 0
	}
	return binary.LittleEndian.Uint32(p)
}

// Uint64 reads 8 little-endian bytes.
func (d *Decoder) Uint64() uint64 {
	p := d.take(8)
	if p == nil {
		return 0
	}
	return binary.LittleEndian.Uint64(p)
}

// Float64 reads a float64, whatever its bits (NaN and infinities too).
func (d *Decoder) Float64() float64 { return math.Float64frombits(d.Uint64()) }

// Finite reads a float64 and fails on NaN or an infinity.
func (d *Decoder) Finite() float64 {
	v := d.Float64()
	if math.IsNaN(v) || math.IsInf(v, 0) {
		d.Fail(nil)
		return 0
	}
	return v
}

// Uint32s reads n uint32s, failing without allocating when fewer are left.
func (d *Decoder) Uint32s(n int) []uint32 { return fixed(d, n, 4, binary.LittleEndian.Uint32) }

// Uint64s reads n uint64s, failing without allocating when fewer are left.
func (d *Decoder) Uint64s(n int) []uint64 { return fixed(d, n, 8, binary.LittleEndian.Uint64) }

// Float64s reads n float64s whatever their bits, failing without
// allocating when fewer are left.
func (d *Decoder) Float64s(n int) []float64 {
	return fixed(d, n, 8, func(p []byte) float64 { return math.Float64frombits(binary.LittleEndian.Uint64(p)) })
}

// fixed reads n values of size bytes each with get; a count the bytes left
// cannot hold fails before anything is allocated.
func fixed[T any](d *Decoder, n, size int, get func([]byte) T) []T {
	if d.err == nil && (n < 0 || n > len(d.b)/size) {
		d.Fail(nil)
	}
	if d.err != nil {
		return nil
	}
	out := make([]T, n)
	for i := range out {
		out[i] = get(d.b[size*i:])
	}
	d.b = d.b[size*n:]
	return out
}

// Finites reads n float64s and fails on NaN or an infinity.
func (d *Decoder) Finites(n int) []float64 {
	out := d.Float64s(n)
	for _, v := range out {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			d.Fail(nil)
			return nil
		}
	}
	return out
}
