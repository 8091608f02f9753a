package blob

import (
	"errors"
	"math"
	"runtime"
	"slices"
	"testing"
)

var errTest = errors.New("test: corrupt")

func TestEncoder_layout(t *testing.T) {
	e := NewEncoder([]byte("H"))
	e.Byte(7)
	e.Uvarint(300)
	e.Str("ab")
	e.Uint32(0x01020304)
	e.Float64(1)
	e.Uint64s([]uint64{2})
	e.Raw([]byte{9})
	want := []byte{'H', 7, 0xac, 0x02, 2, 'a', 'b', 4, 3, 2, 1, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 2, 0, 0, 0, 0, 0, 0, 0, 9}
	if got := e.Bytes(); !slices.Equal(got, want) {
		t.Fatalf("got % x\nwant % x", got, want)
	}
}

func TestDecoder_roundTrip(t *testing.T) {
	e := NewEncoder(nil)
	e.Byte(1)
	e.Uvarint(1 << 40)
	e.Str("name")
	e.Uvarint(3)
	e.Uint32s([]uint32{1, 2, 3})
	e.Uint64s([]uint64{math.MaxUint64})
	e.Float64s([]float64{math.Pi, -0.5})
	e.Float64(math.NaN())
	e.Raw([]byte("tail"))

	d := NewDecoder(e.Bytes(), errTest)
	if got := d.Byte(); got != 1 {
		t.Errorf("Byte = %d", got)
	}
	if got := d.Uvarint(); got != 1<<40 {
		t.Errorf("Uvarint = %d", got)
	}
	if got := d.Str(); got != "name" {
		t.Errorf("String = %q", got)
	}
	if got := d.Uint32s(d.Count(4)); !slices.Equal(got, []uint32{1, 2, 3}) {
		t.Errorf("Uint32s = %v", got)
	}
	if got := d.Uint64s(1); !slices.Equal(got, []uint64{math.MaxUint64}) {
		t.Errorf("Uint64s = %v", got)
	}
	if got := d.Finites(2); !slices.Equal(got, []float64{math.Pi, -0.5}) {
		t.Errorf("Finites = %v", got)
	}
	if got := d.Float64(); !math.IsNaN(got) {
		t.Errorf("Float64 = %v, want NaN", got)
	}
	if got := string(d.Rest()); got != "tail" {
		t.Errorf("Rest = %q", got)
	}
	if err := d.Finish(); err != nil {
		t.Errorf("Finish: %v", err)
	}
}

func TestDecoder_failures(t *testing.T) {
	nan := NewEncoder(nil)
	nan.Float64(math.Inf(1))
	for _, tc := range []struct {
		name string
		data []byte
		read func(d *Decoder)
	}{
		{"truncated uvarint", []byte{0x80}, func(d *Decoder) { d.Uvarint() }},
		{"count beyond the data", []byte{3, 0, 0, 0, 0, 0, 0, 0, 0}, func(d *Decoder) { d.Count(4) }},
		{"bounded above its limit", []byte{11}, func(d *Decoder) { d.Bounded(10) }},
		{"string beyond the data", []byte{5, 'a'}, func(d *Decoder) { d.Str() }},
		{"short uint32", []byte{1, 2, 3}, func(d *Decoder) { d.Uint32() }},
		{"short floats", make([]byte, 15), func(d *Decoder) { d.Float64s(2) }},
		{"negative count", nil, func(d *Decoder) { d.Uint64s(-1) }},
		{"infinity", nan.Bytes(), func(d *Decoder) { d.Finite() }},
		{"infinity in a slice", nan.Bytes(), func(d *Decoder) { d.Finites(1) }},
		{"trailing bytes", []byte{1, 2}, func(d *Decoder) { d.Byte() }},
		{"non-minimal uvarint", []byte{0x80, 0x00}, func(d *Decoder) { d.MinimalUvarints().Uvarint() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := NewDecoder(tc.data, errTest)
			tc.read(d)
			if err := d.Finish(); !errors.Is(err, errTest) {
				t.Fatalf("Finish = %v, want %v", err, errTest)
			}
		})
	}
	if d := NewDecoder([]byte{0x80, 0x00}, errTest); d.Uvarint() != 0 || d.Finish() != nil {
		t.Error("a non-minimal uvarint is rejected without MinimalUvarints")
	}
}

// The first failure sticks: later reads return zero values and do not
// replace it.
func TestDecoder_Fail_sticky(t *testing.T) {
	first := errors.New("first")
	d := NewDecoder([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9}, errTest)
	d.Fail(first)
	if d.Byte() != 0 || d.Uvarint() != 0 || d.Float64s(1) != nil || d.Str() != "" || d.Len() != 0 {
		t.Error("reads after a failure return data")
	}
	d.Fail(nil)
	if err := d.Finish(); err != first {
		t.Errorf("Finish = %v, want the first failure", err)
	}
}

// Decoding arbitrary bytes allocates at most a small multiple of them:
// every count is bounded by what is left.
func FuzzDecoder(f *testing.F) {
	e := NewEncoder(nil)
	e.Uvarint(2)
	e.Float64s([]float64{1, 2})
	e.Str("xy")
	f.Add([]byte{0, 1, 2}, e.Bytes())
	f.Add([]byte{3, 4, 5, 6}, []byte{0xff, 0xff, 0xff, 0xff, 0x0f, 1, 2, 3})
	f.Fuzz(func(t *testing.T, ops, data []byte) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		d := NewDecoder(data, errTest)
		for _, op := range ops {
			switch op % 7 {
			case 0:
				d.Float64s(d.Count(8))
			case 1:
				d.Finites(d.Count(8))
			case 2:
				d.Str()
			case 3:
				d.Uint32s(d.Count(4))
			case 4:
				d.Uint64s(d.Count(8))
			case 5:
				d.Raw(d.Count(1))
			case 6:
				d.Bounded(1 << 20)
			}
		}
		_ = d.Finish()
		runtime.ReadMemStats(&after)
		if n := after.TotalAlloc - before.TotalAlloc; n > uint64(64*len(data)+1<<20) {
			t.Fatalf("decoding %d bytes allocated %d bytes", len(data), n)
		}
	})
}

// Peek shows the next bytes without consuming them, and nothing when
// fewer are left or the decoder has failed.
func TestDecoder_Peek(t *testing.T) {
	d := NewDecoder([]byte{1, 2, 3}, errTest)
	if p := d.Peek(2); !slices.Equal(p, []byte{1, 2}) || d.Len() != 3 {
		t.Fatalf("Peek(2) = %v, %d left; want [1 2] and 3 left", p, d.Len())
	}
	if p := d.Peek(4); p != nil || d.Err() != nil {
		t.Fatalf("Peek past the end = %v, err %v; want nil and no failure", p, d.Err())
	}
	if b := d.Byte(); b != 1 {
		t.Fatalf("Byte after Peek = %d, want 1", b)
	}
	d.Raw(5)
	if p := d.Peek(0); p != nil {
		t.Fatalf("Peek after a failure = %v, want nil", p)
	}
}
