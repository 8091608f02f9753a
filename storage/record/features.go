package record

import "sort"

// DenseFeatures turns per-item feature maps into vectors over the sorted
// union of the feature names: the training snapshot's and
// ItemFeatures' view of the catalogue in both stores.
func DenseFeatures(feats []map[string]float64) ([]string, [][]float64) {
	seen := map[string]struct{}{}
	for _, f := range feats {
		for name := range f {
			seen[name] = struct{}{}
		}
	}
	if len(seen) == 0 {
		return nil, make([][]float64, len(feats))
	}
	names := make([]string, 0, len(seen))
	for name := range seen {
		names = append(names, name)
	}
	sort.Strings(names)
	out := make([][]float64, len(feats))
	for i, f := range feats {
		if f == nil {
			continue
		}
		v := make([]float64, len(names))
		for j, name := range names {
			v[j] = f[name]
		}
		out[i] = v
	}
	return names, out
}
