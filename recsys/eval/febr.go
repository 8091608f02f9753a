package eval

import (
	"slices"

	"recsys/api"
	"recsys/recsys"
)

// expandModels replaces every model name that stands for several report
// rows by their registry names (febr → its seven variants, Table 4.3),
// dropping repeats, so that each variant is one row.
func expandModels(names []string) []string {
	var out []string
	for _, name := range names {
		vs := recsys.Variants(name)
		if len(vs) == 0 {
			vs = []recsys.Variant{{Name: name}}
		}
		for _, v := range vs {
			if !slices.Contains(out, v.Name) {
				out = append(out, v.Name)
			}
		}
	}
	return out
}

// rowName is the model and variant a registry name reports under: a FEBR
// variant is model "febr" with its label ("FEBRi-slim"), any other model
// its own name.
func rowName(name string) (model, variant string) {
	if v, ok := recsys.FEBRVariantOf(name); ok {
		return recsys.FEBRModel, v.Label
	}
	return name, ""
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
