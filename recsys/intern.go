package recsys

import (
	"encoding/binary"
	"slices"
	"sync"
	"weak"
)

// decoded interns the training matrices read from model blobs. The models
// of one training job hold the same matrix (userknn, kunn, kunn-u and
// FEBR's user sides keep it to search KNN(u) at request time), so a server
// loading them would decode, transpose and keep one copy per model, 20M
// indices each way at 20M events (the 22 models of auto mode loaded in 8.0
// and 5.9 s shared, 14.9 and 10.5 s not). A matrix is shared
// only when its encoding is equal, byte for byte, to one still held by a
// loaded model; the table holds them weakly, so a matrix goes when its
// last model does.
var decoded struct {
	mu sync.Mutex
	by map[matrixShape][]weak.Pointer[Matrix]
}

type matrixShape struct{ users, items, nnz int }

// internedMatrix returns a held matrix whose row pointers are ptr, column
// lengths colLen and column indices the little-endian idx, nil if none is.
func internedMatrix(ptr, colLen []int, idx []byte) *Matrix {
	key := matrixShape{len(ptr) - 1, len(colLen), len(idx) / 4}
	decoded.mu.Lock()
	held := slices.Clone(decoded.by[key])
	decoded.mu.Unlock()
	for _, w := range held {
		if x := w.Value(); x != nil && x.encodes(ptr, colLen, idx) {
			return x
		}
	}
	return nil
}

// intern records x as held and returns it, or returns the held matrix equal
// to x when another decode (a server's other loader) recorded one since
// the look-up, so that the two models share it and x goes; it drops the
// entries of collected matrices.
func intern(x *Matrix) *Matrix {
	key := matrixShape{x.nUsers, x.nItems, x.NNZ()}
	decoded.mu.Lock()
	defer decoded.mu.Unlock()
	if decoded.by == nil {
		decoded.by = map[matrixShape][]weak.Pointer[Matrix]{}
	}
	for k, ws := range decoded.by {
		ws = slices.DeleteFunc(ws, func(w weak.Pointer[Matrix]) bool { return w.Value() == nil })
		if len(ws) == 0 {
			delete(decoded.by, k)
		} else {
			decoded.by[k] = ws
		}
	}
	for _, w := range decoded.by[key] {
		if y := w.Value(); y != nil && slices.Equal(y.byUser.ptr, x.byUser.ptr) && slices.Equal(y.byUser.idx, x.byUser.idx) {
			return y
		}
	}
	decoded.by[key] = append(decoded.by[key], weak.Make(x))
	return x
}

// encodes reports whether x is the matrix of the given row pointers,
// column lengths and little-endian column indices (readMatrix's fields).
func (x *Matrix) encodes(ptr, colLen []int, idx []byte) bool {
	if !slices.Equal(x.byUser.ptr, ptr) || len(x.byUser.idx)*4 != len(idx) {
		return false
	}
	for i, n := range colLen {
		if x.ItemCount(i) != n {
			return false
		}
	}
	for k, v := range x.byUser.idx {
		if binary.LittleEndian.Uint32(idx[4*k:]) != v {
			return false
		}
	}
	return true
}
