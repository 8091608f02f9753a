package eval

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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
