package ltr

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"testing"
)

func trainedModel(tb testing.TB) (*Model, Queries) {
	tb.Helper()
	q := xorQueries(tb, 1, 80, 25, 4)
	m, _, err := Train(context.Background(), q, Queries{}, Options{Trees: 12, MinLeaf: 5, MaxLeaves: 6})
	if err != nil {
		tb.Fatal(err)
	}
	return m, q
}

func TestModel_MarshalBinary_roundTrip(t *testing.T) {
	m, q := trainedModel(t)
	data, err := m.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var got Model
	if err := got.UnmarshalBinary(data); err != nil {
		t.Fatal(err)
	}
	if got.Features() != 4 || got.Trees() != 12 {
		t.Fatalf("decoded %d features, %d trees, want 4 and 12", got.Features(), got.Trees())
	}
	for r := range q.Rows() {
		x := q.X[r*4 : (r+1)*4]
		if a, b := m.Score(x), got.Score(x); math.Float64bits(a) != math.Float64bits(b) {
			t.Fatalf("row %d: decoded score %v, want %v", r, b, a)
		}
		ba, ca := m.Explain(x)
		bb, cb := got.Explain(x)
		if ba != bb || ca[0] != cb[0] || ca[3] != cb[3] {
			t.Fatalf("row %d: decoded explanation differs", r)
		}
	}
	again, _ := got.MarshalBinary()
	if !bytes.Equal(again, data) {
		t.Error("re-encoding the decoded model changed the bytes")
	}
}

func TestModel_UnmarshalBinary_corrupt(t *testing.T) {
	m, _ := trainedModel(t)
	data, _ := m.MarshalBinary()
	for n := range len(data) {
		var got Model
		if err := got.UnmarshalBinary(data[:n]); err == nil {
			t.Fatalf("truncated to %d of %d bytes: no error", n, len(data))
		}
	}
	var keep Model
	if err := keep.UnmarshalBinary(append(data[:len(data):len(data)], 0)); err == nil {
		t.Error("trailing byte: no error")
	}

	// One tree of 3 nodes over 2 features, written by hand; each case
	// spoils one field.
	tree := func(feature, left, right byte, threshold float32, gain, value float64) []byte {
		b := []byte("LTRM\x01\x02\x01\x03")
		b = append(b, feature)
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(threshold))
		b = append(b, left, right)
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(gain))
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(0))
		for range 2 {
			b = append(b, 0)
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(value))
		}
		return b
	}
	good := tree(2, 1, 2, 0.5, 1, -1)
	var ok Model
	if err := ok.UnmarshalBinary(good); err != nil {
		t.Fatalf("hand-written model: %v", err)
	}
	if s := ok.Score([]float32{0, 1}); s != -1 {
		t.Errorf("hand-written model scores %v, want -1", s)
	}
	for _, c := range []struct {
		name string
		data []byte
	}{
		{"magic", append([]byte("LTRX"), good[4:]...)},
		{"version", append([]byte("LTRM\x02"), good[5:]...)},
		{"feature out of range", tree(3, 1, 2, 0.5, 1, -1)},
		{"child before parent", tree(2, 0, 2, 0.5, 1, -1)},
		{"child out of tree", tree(2, 1, 3, 0.5, 1, -1)},
		{"same child twice", tree(2, 1, 1, 0.5, 1, -1)},
		{"nan threshold", tree(2, 1, 2, float32(math.NaN()), 1, -1)},
		{"negative gain", tree(2, 1, 2, 0.5, -1, -1)},
		{"infinite value", tree(2, 1, 2, 0.5, 1, math.Inf(-1))},
		{"no features", append([]byte("LTRM\x01\x00"), good[6:]...)},
		{"empty tree", append([]byte("LTRM\x01\x02\x01\x00"), make([]byte, 9)...)},
		{"long uvarint", append([]byte("LTRM\x01\x82\x00"), good[6:]...)},
	} {
		keep := *m
		if err := m.UnmarshalBinary(c.data); err == nil {
			t.Errorf("%s: no error", c.name)
		}
		if m.Trees() != keep.Trees() || len(m.nodes) != len(keep.nodes) {
			t.Errorf("%s: a failed decode changed the model", c.name)
		}
	}
}

// FuzzUnmarshalBinary: any input decodes without panicking; what decodes
// scores a row and re-encodes to the same bytes.
func FuzzUnmarshalBinary(f *testing.F) {
	m, _ := trainedModel(f)
	data, _ := m.MarshalBinary()
	f.Add(data)
	f.Add(data[:len(data)/2])
	empty, _ := (&Model{d: 3}).MarshalBinary()
	f.Add(empty)
	f.Add([]byte("LTRM\x01\x02\x01\x03\x02\x00\x00\x00\x3f\x01\x02"))
	f.Fuzz(func(t *testing.T, b []byte) {
		var got Model
		if err := got.UnmarshalBinary(b); err != nil {
			return
		}
		got.Score(make([]float32, got.Features()))
		got.Explain(make([]float32, got.Features()))
		again, err := got.MarshalBinary()
		if err != nil || !bytes.Equal(again, b) {
			t.Fatalf("re-encoding %x gave %x, %v", b, again, err)
		}
	})
}
