package eval

import (
	"slices"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/recsys"
	"github.com/recsys-engine/recsys/recsys/febr"
)

// FEBRAll is the model name that stands for the seven FEBR variants of
// dissertation Table 4.3, one report row each; "febr" itself is FEBRi-slim,
// as in the service.
const FEBRAll = "febr-all"

// expandModels replaces FEBRAll by the registry names of the seven FEBR
// variants, dropping names whose row is already listed ("febr" and
// "febr-i-slim" are both FEBRi-slim), so that each variant is one row;
// every other name stands for itself.
func expandModels(names []string) []string {
	var out []string
	var rows [][2]string
	for _, name := range names {
		vs := []string{name}
		if name == FEBRAll {
			vs = nil
			for _, v := range febr.Variants(febr.Name) {
				vs = append(vs, v.Name)
			}
		}
		for _, v := range vs {
			m, variant := rowName(v)
			if row := [2]string{m, variant}; !slices.Contains(rows, row) {
				out, rows = append(out, v), append(rows, row)
			}
		}
	}
	return out
}

// CheckModels reports the first name that is neither a registered model
// nor FEBRAll.
func CheckModels(names []string) error {
	for _, name := range names {
		if name == FEBRAll {
			continue
		}
		if _, err := recsys.KindOf(name); err != nil {
			return err
		}
	}
	return nil
}

// rowName is the model and variant a registry name reports under: a FEBR
// variant is model "febr" with its label ("FEBRi-slim"), any other model
// its own name.
func rowName(name string) (model, variant string) {
	if v, ok := febr.VariantOf(name); ok {
		return febr.Name, v.Label
	}
	return name, ""
}

// febrOptions is the FEBR options of p, nil when it has none.
func febrOptions(p recsys.Params) *febr.Options {
	o, _ := p.Options.(*febr.Options)
	return o
}

// labelRow sets the model and variant of a report row fitted as name.
func labelRow(row *api.ReportRow, name string) {
	row.Model, row.Variant = rowName(name)
}

// fileName names a row's --dump files: the variant when there is one.
func fileName(name string) string {
	m, v := rowName(name)
	if v != "" {
		return v
	}
	return m
}
