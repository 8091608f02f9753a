package recsys

import (
	"slices"
	"testing"
)

func TestNewMatrix_dedupAndTranspose(t *testing.T) {
	pairs := []Pair{{2, 1}, {0, 3}, {0, 1}, {2, 1}, {0, 0}, {3, 3}}
	x, err := NewMatrix(5, 4, pairs)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := x.NNZ(), 5; got != want {
		t.Fatalf("NNZ = %d, want %d", got, want)
	}
	rows := map[int][]uint32{0: {0, 1, 3}, 1: nil, 2: {1}, 3: {3}, 4: nil}
	for u, want := range rows {
		if got := x.Row(u); !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Errorf("Row(%d) = %v, want %v", u, got, want)
		}
	}
	cols := map[int][]uint32{0: {0}, 1: {0, 2}, 2: nil, 3: {0, 3}}
	for i, want := range cols {
		if got := x.Col(i); !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Errorf("Col(%d) = %v, want %v", i, got, want)
		}
	}
	if got, want := x.Popularity(), []uint32{1, 2, 0, 2}; !slices.Equal(got, want) {
		t.Errorf("Popularity = %v, want %v", got, want)
	}
	if got, want := x.UserCount(0), 3; got != want {
		t.Errorf("UserCount(0) = %d, want %d", got, want)
	}
}

func TestNewMatrix_outOfRange(t *testing.T) {
	for _, p := range []Pair{{5, 0}, {0, 4}} {
		if _, err := NewMatrix(5, 4, []Pair{p}); err == nil {
			t.Errorf("NewMatrix accepted %v", p)
		}
	}
}

func TestMatrix_Pairs_roundTrip(t *testing.T) {
	x, _ := randomMatrix(t, 1, 30, 20, 0.2)
	y, err := NewMatrix(30, 20, x.Pairs())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(x.byUser.idx, y.byUser.idx) || !slices.Equal(x.byItem.idx, y.byItem.idx) {
		t.Fatal("rebuilding from Pairs changed the matrix")
	}
}
