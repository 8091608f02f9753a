package handlers

import (
	"strings"
	"testing"

	"github.com/recsys-engine/recsys/api"
)

// TestNotPlainlyValid_isTheValidator checks the hand-written check of an
// event against the validator's tags on every combination of awkward
// values: they must agree on each, or a batch the validator rejects could
// be stored unchecked (or a valid one refused).
func TestNotPlainlyValid_isTheValidator(t *testing.T) {
	v := newValidator()
	ids := []string{"", "u1", "ü-ñ", strings.Repeat("a", 256), strings.Repeat("a", 257), strings.Repeat("é", 128),
		"a\x00b", "a\nb", "tab\there", "\xff\xfe", "a\u0085b", " ", "emoji 😀"}
	types := []string{"", "view", strings.Repeat("t", 64), strings.Repeat("t", 65), strings.Repeat("é", 64),
		strings.Repeat("é", 65), "\xff", "a\x00"}
	recs := []string{"", "r-1", strings.Repeat("r", 64), strings.Repeat("r", 65), "r é", "r\x7f", "r\x1f", "~ !",
		strings.Repeat("é", 32), "\xff"}
	checked, invalid := 0, 0
	for _, u := range ids {
		for _, i := range ids {
			for _, ty := range types {
				for _, r := range recs {
					e := api.InteractionIn{UserID: u, ItemID: i, Type: ty, RecommendationID: r}
					byHand := notPlainlyValid(e)
					byValidator := v.Struct(e) != nil
					if byHand != byValidator {
						t.Fatalf("%+v: by hand invalid=%v, validator invalid=%v", e, byHand, byValidator)
					}
					checked++
					if byHand {
						invalid++
					}
				}
			}
		}
	}
	// Both outcomes must be exercised for the agreement to mean anything.
	if invalid == 0 || invalid == checked {
		t.Fatalf("%d of %d combinations invalid: the cases do not cover both outcomes", invalid, checked)
	}
}
