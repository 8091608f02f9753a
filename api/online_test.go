package api

import (
	"strings"
	"testing"
	"time"
)

// RecommendationTime reads back the time NewRecommendationID wrote, and
// refuses ids it did not make, upper-case hex among them (the stores keep
// ids in time order as strings); RecommendationIDsBefore sorts between the
// ids of one nanosecond before and after.
func TestRecommendationTime(t *testing.T) {
	at := time.Date(2026, 5, 1, 12, 0, 0, 123, time.UTC)
	id := NewRecommendationID(at, "ab12cd34-", 7)
	if got, ok := RecommendationTime(id); !ok || !got.Equal(at) {
		t.Fatalf("RecommendationTime(%q) = %v, %v; want %v", id, got, ok, at)
	}
	if strings.ToUpper(id[:16]) == id[:16] {
		t.Fatalf("the time of %q has no hex letter to test upper case with", id)
	}
	for _, bad := range []string{strings.ToUpper(id[:16]) + id[16:], "r1", id[:16] + "x" + id[17:], "+" + id[1:], ""} {
		if _, ok := RecommendationTime(bad); ok {
			t.Errorf("RecommendationTime(%q) accepted", bad)
		}
	}
	cut := RecommendationIDsBefore(at)
	if before, after := NewRecommendationID(at.Add(-1), "z", 1<<60), NewRecommendationID(at, "", 0); !(before < cut && cut < after && cut < id) {
		t.Fatalf("cut %q: want %q < cut < %q", cut, before, after)
	}
}
