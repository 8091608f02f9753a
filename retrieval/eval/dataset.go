package eval

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/recsys-engine/recsys/recsys"
	"github.com/recsys-engine/recsys/recsys/dataset"
)

// Dataset is a labelled feature-vector set (e.g. the UCI sets of seed 002
// §5.1): one row of X per item, Labels[i] an index into Classes.
type Dataset struct {
	Name     string
	Features []string
	X        [][]float64
	Labels   []int
	Classes  []string
}

// ReadCSV reads a CSV file with a header row; the column named label holds
// the class and every other column must be numeric.
func ReadCSV(path, label string) (*Dataset, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	name := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	d, err := ParseCSV(f, label)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	d.Name = name
	return d, nil
}

// ParseCSV parses what ReadCSV reads.
func ParseCSV(r io.Reader, label string) (*Dataset, error) {
	cr := csv.NewReader(r)
	cr.ReuseRecord = false
	header, err := cr.Read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("empty file")
		}
		return nil, err
	}
	col := -1
	for i, h := range header {
		if strings.TrimSpace(h) == label {
			col = i
		}
	}
	if col < 0 {
		return nil, fmt.Errorf("no column %q in header %v", label, header)
	}
	d := &Dataset{}
	for i, h := range header {
		if i != col {
			d.Features = append(d.Features, strings.TrimSpace(h))
		}
	}
	if len(d.Features) == 0 {
		return nil, errors.New("no feature columns")
	}
	classOf := map[string]int{}
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		x := make([]float64, 0, len(d.Features))
		for i, v := range rec {
			if i == col {
				continue
			}
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				return nil, fmt.Errorf("line %d, column %q: %w", line, header[i], err)
			}
			x = append(x, f)
		}
		c := strings.TrimSpace(rec[col])
		k, ok := classOf[c]
		if !ok {
			k = len(d.Classes)
			classOf[c] = k
			d.Classes = append(d.Classes, c)
		}
		d.X = append(d.X, x)
		d.Labels = append(d.Labels, k)
	}
	if len(d.X) == 0 {
		return nil, errors.New("no data rows")
	}
	return d, nil
}

// Interactions are a data set's positive user–item pairs with times and
// the items' feature vectors: the input of ColdStart.
type Interactions struct {
	Name         string
	Users, Items int
	Pairs        []recsys.Pair
	Times        []int64     // per pair (Unix seconds; 0 when unknown)
	Features     [][]float64 // per item; nil when the item has none
	FeatureNames []string
}

// LoadInteractions reads a data set in one of dataset.Formats with the
// format's relevance threshold (MovieLens: rating ≥ 4) and the item
// features of its item file (MovieLens: the 19 genre flags of u.item).
func LoadInteractions(format, path string) (*Interactions, error) {
	in := &Interactions{Name: path}
	items := map[string]int{}
	var feats []map[string]float64
	names := map[string]bool{}
	err := dataset.ReadItems(format, path, func(it dataset.Item) error {
		if _, ok := items[it.ID]; !ok {
			items[it.ID] = len(feats)
			feats = append(feats, it.Features)
			for n := range it.Features {
				names[n] = true
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	minValue, hasMin := dataset.DefaultMinValue(format)
	users := map[string]int{}
	seen := map[recsys.Pair]int{}
	err = dataset.ReadEvents(format, path, func(e dataset.Event) error {
		if hasMin && e.HasValue && e.Value < minValue {
			return nil
		}
		i, ok := items[e.Item]
		if !ok {
			i = len(feats)
			items[e.Item] = i
			feats = append(feats, nil)
		}
		u, ok := users[e.User]
		if !ok {
			u = len(users)
			users[e.User] = u
		}
		p := recsys.Pair{User: uint32(u), Item: uint32(i)}
		var t int64
		if !e.Time.IsZero() {
			t = e.Time.Unix()
		}
		if k, dup := seen[p]; dup { // keep the latest time of a repeated pair
			in.Times[k] = max(in.Times[k], t)
			return nil
		}
		seen[p] = len(in.Pairs)
		in.Pairs = append(in.Pairs, p)
		in.Times = append(in.Times, t)
		return nil
	})
	if err != nil {
		return nil, err
	}
	for n := range names {
		in.FeatureNames = append(in.FeatureNames, n)
	}
	slices.Sort(in.FeatureNames)
	in.Users, in.Items = len(users), len(feats)
	in.Features = make([][]float64, len(feats))
	for i, f := range feats {
		if len(f) == 0 {
			continue
		}
		v := make([]float64, len(in.FeatureNames))
		for k, n := range in.FeatureNames {
			v[k] = f[n]
		}
		in.Features[i] = v
	}
	if len(in.FeatureNames) == 0 {
		return nil, fmt.Errorf("retrieval: %s has no item features", path)
	}
	return in, nil
}
