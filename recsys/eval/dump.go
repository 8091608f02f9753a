package eval

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// dumper writes the --dump files of docs/design.md#evaluation for one fold into
// DIR/fold-N/ (N from 1), with the original ids.
type dumper struct {
	dir              string
	userIDs, itemIDs func(uint32) string
	split            *Split
}

func newDumper(root string, fold int, d *Dataset, s *Split) (*dumper, error) {
	dir := filepath.Join(root, fmt.Sprintf("fold-%d", fold+1))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	id := func(ids []string) func(uint32) string {
		return func(k uint32) string {
			if int(k) < len(ids) {
				return ids[k]
			}
			return strconv.FormatUint(uint64(k), 10)
		}
	}
	dm := &dumper{dir: dir, userIDs: id(d.UserIDs), itemIDs: id(d.ItemIDs), split: s}
	train := make([][]uint32, s.Train.Users())
	for u := range train {
		train[u] = s.Train.Row(u)
	}
	for name, sets := range map[string][][]uint32{"train.csv": train, "validation.csv": s.Validation, "test.csv": s.Test} {
		err := dm.write(name, []string{"user", "item"}, func(emit func(...string)) {
			for u, items := range sets {
				for _, i := range items {
					emit(dm.userIDs(uint32(u)), dm.itemIDs(i))
				}
			}
		})
		if err != nil {
			return nil, err
		}
	}
	return dm, nil
}

// model writes <name>.ranks.csv (validation then test items) and
// <name>.top100.csv.
func (dm *dumper) model(name string, r *foldResult) error {
	err := dm.write(name+".ranks.csv", []string{"user", "item", "rank"}, func(emit func(...string)) {
		for set, items := range [][][]uint32{dm.split.Validation, dm.split.Test} {
			for u, list := range items {
				for k, i := range list {
					emit(dm.userIDs(uint32(u)), dm.itemIDs(i), strconv.Itoa(r.ranks[set][u][k]))
				}
			}
		}
	})
	if err != nil {
		return err
	}
	return dm.write(name+".top100.csv", []string{"user", "item", "rank", "score"}, func(emit func(...string)) {
		for u, list := range r.tops {
			for k, e := range list {
				emit(dm.userIDs(uint32(u)), dm.itemIDs(e.Index), strconv.Itoa(k), strconv.FormatFloat(e.Value, 'g', -1, 64))
			}
		}
	})
}

func (dm *dumper) write(name string, header []string, rows func(emit func(...string))) (err error) {
	f, err := os.Create(filepath.Join(dm.dir, name))
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	bw := bufio.NewWriter(f)
	w := csv.NewWriter(bw)
	var werr error
	emit := func(rec ...string) {
		if werr == nil {
			werr = w.Write(rec)
		}
	}
	emit(header...)
	rows(emit)
	w.Flush()
	if werr != nil {
		return werr
	}
	if err := w.Error(); err != nil {
		return err
	}
	return bw.Flush()
}
