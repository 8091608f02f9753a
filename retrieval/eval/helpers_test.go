package eval

import "github.com/recsys-engine/recsys/retrieval/internal/fixture"

// synthetic is the labelled set fixture.Labelled as a Dataset: three
// classes, two informative features and noise ones that swamp Euclidean
// distance.
func synthetic(n, noise int, seed uint64) *Dataset {
	ds := &Dataset{Name: "synthetic", Classes: []string{"a", "b", "c"}}
	ds.X, ds.Labels = fixture.Labelled(n, noise, seed)
	for j := 0; j < 2+noise; j++ {
		ds.Features = append(ds.Features, "f"+string(rune('0'+j)))
	}
	return ds
}

// raceEnabled shrinks the slow quality tests under the race detector.
const raceEnabled = fixture.Race
