package recsys

import (
	"context"
	"runtime"
	"slices"
	"sync"
	"testing"
)

// Models decoded from blobs of one training matrix share one copy of it
// (userknn twice and kunn-u here), equal to the original; a matrix of the
// same shape with one entry moved is not shared; and once no model holds a
// matrix, the table lets it go.
func TestReadMatrix_interned(t *testing.T) {
	x, _ := randomMatrix(t, 3, 40, 25, 0.3)
	encode := func(name string, x *Matrix) []byte { return fittedBlob(t, name, x) }
	matrixOf := func(b []byte) *Matrix {
		t.Helper()
		m, err := Load(b)
		if err != nil {
			t.Fatal(err)
		}
		return m.(*UserP).side.x
	}
	sameAs := func(a, b *Matrix) bool {
		return a.nUsers == b.nUsers && a.nItems == b.nItems && slices.Equal(a.byUser.ptr, b.byUser.ptr) &&
			slices.Equal(a.byUser.idx, b.byUser.idx) && slices.Equal(a.byItem.ptr, b.byItem.ptr) && slices.Equal(a.byItem.idx, b.byItem.idx)
	}
	user := encode("userknn", x)
	a, b, c := matrixOf(user), matrixOf(user), matrixOf(encode("kunn-u", x))
	if a != b || a != c || a == x {
		t.Fatalf("decoded matrices %p %p %p (fitted on %p): want one shared copy", a, b, c, x)
	}
	if !sameAs(a, x) {
		t.Fatal("the shared matrix differs from the fitted one")
	}

	// The same shape, one entry of the last row moved to a free column.
	pairs := x.Pairs()
	last := pairs[len(pairs)-1]
	row := x.Row(int(last.User))
	for j := range uint32(x.Items()) {
		if _, held := slices.BinarySearch(row, j); !held {
			pairs[len(pairs)-1].Item = j
			break
		}
	}
	y, err := NewMatrix(x.Users(), x.Items(), pairs)
	if err != nil {
		t.Fatal(err)
	}
	if y.NNZ() != x.NNZ() || sameAs(x, y) {
		t.Fatal("the moved entry did not make a different matrix of the same shape")
	}
	d := matrixOf(encode("userknn", y))
	if d == a || !sameAs(d, y) {
		t.Fatalf("a different matrix of the same shape decoded as %p (shared %p), equal to its own %v", d, a, sameAs(d, y))
	}

	ptr, idx := slices.Clone(x.byUser.ptr), make([]byte, 4*x.NNZ())
	for k, v := range x.byUser.idx {
		idx[4*k], idx[4*k+1], idx[4*k+2], idx[4*k+3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
	}
	colLen := make([]int, x.Items())
	for i := range colLen {
		colLen[i] = x.ItemCount(i)
	}
	if internedMatrix(ptr, colLen, idx) != a {
		t.Fatal("the table does not hold the shared matrix")
	}
	a, b, c = nil, nil, nil
	runtime.GC()
	runtime.GC()
	if m := internedMatrix(ptr, colLen, idx); m != nil {
		t.Fatal("the table still holds a matrix no model holds")
	}
	runtime.KeepAlive(d)
}

// Two models of one training matrix decoded at the same moment (a
// server's two loaders) share one matrix: both may miss the table and
// decode, but the second to record its copy takes the first's instead.
func TestReadMatrix_internedConcurrently(t *testing.T) {
	for round := range 8 {
		x, _ := randomMatrix(t, uint64(100+round), 3000, 400, 0.05)
		b := fittedBlob(t, "userknn", x)
		start := make(chan struct{})
		var got [2]*Matrix
		var wg sync.WaitGroup
		for g := range got {
			wg.Go(func() {
				<-start
				m, err := Load(b)
				if err != nil {
					t.Error(err)
					return
				}
				got[g] = m.(*UserP).side.x
			})
		}
		close(start)
		wg.Wait()
		if got[0] == nil || got[0] != got[1] {
			t.Fatalf("round %d: decoded at once as %p and %p, want one shared matrix", round, got[0], got[1])
		}
	}
}

// fittedBlob is model name fitted on x at k = 5, encoded.
func fittedBlob(tb testing.TB, name string, x *Matrix) []byte {
	tb.Helper()
	m, err := New(name)
	if err != nil {
		tb.Fatal(err)
	}
	if err := m.Fit(context.Background(), x, Params{K: 5}); err != nil {
		tb.Fatal(err)
	}
	b, err := m.MarshalBinary()
	if err != nil {
		tb.Fatal(err)
	}
	return b
}
