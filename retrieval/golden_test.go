package retrieval

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"
)

var updateGolden = flag.Bool("update-golden", false, "rewrite testdata/golden with the current encoder")

// A Metric and an Index persisted by an earlier release must still decode
// to the same values and re-encode to the same bytes (testdata/golden was
// written by the codec of that release).
func TestCodec_golden(t *testing.T) {
	met := mustMetric(t, 4, 3, 7)
	ix, err := BuildIndex([][]float64{{1, -2.5, 3}, {0.125, 1e-300, -7}, {4, 5, 6}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		file  string
		enc   interface{ MarshalBinary() ([]byte, error) }
		check func(t *testing.T, golden []byte) []byte
	}{
		{"metric", met, func(t *testing.T, golden []byte) []byte {
			var back Metric
			if err := back.UnmarshalBinary(golden); err != nil {
				t.Fatalf("UnmarshalBinary: %v", err)
			}
			if back.Method != met.Method || !slices.Equal(back.Mean, met.Mean) || !slices.Equal(back.Scale, met.Scale) || !mat.Equal(back.L, met.L) {
				t.Fatalf("decoded %+v, want %+v", back, met)
			}
			out, _ := back.MarshalBinary()
			return out
		}},
		{"index", ix, func(t *testing.T, golden []byte) []byte {
			var back Index
			if err := back.UnmarshalBinary(golden); err != nil {
				t.Fatalf("UnmarshalBinary: %v", err)
			}
			if back.Dim() != ix.Dim() || back.Len() != ix.Len() {
				t.Fatalf("decoded %d×%d, want %d×%d", back.Len(), back.Dim(), ix.Len(), ix.Dim())
			}
			for id := range ix.Len() {
				if !slices.Equal(back.Vector(id), ix.Vector(id)) {
					t.Fatalf("vector %d: %v, want %v", id, back.Vector(id), ix.Vector(id))
				}
			}
			out, _ := back.MarshalBinary()
			return out
		}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			data, err := tc.enc.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", "golden", tc.file+".bin")
			if *updateGolden {
				if err := os.WriteFile(path, data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			golden, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(data, golden) {
				t.Fatalf("encoding gives %d bytes that differ from the %d golden ones", len(data), len(golden))
			}
			if again := tc.check(t, golden); !slices.Equal(again, golden) {
				t.Fatal("re-encoding the decoded value changed the bytes")
			}
		})
	}
}
