package api

import (
	"strings"
	"testing"
	"time"
)

// The training budget's time: a Go duration, 0 or off for none, written
// back as a flag gives it.
func TestParseTrainTime(t *testing.T) {
	for _, c := range []struct {
		in   string
		want time.Duration
		out  string
	}{{"30m", 30 * time.Minute, "30m"}, {"1h30m", 90 * time.Minute, "1h30m"}, {"2h", 2 * time.Hour, "2h"}, {"45s", 45 * time.Second, "45s"},
		{"0", 0, "off"}, {"off", 0, "off"}, {"0s", 0, "off"}, {" 10m ", 10 * time.Minute, "10m"}} {
		got, err := ParseTrainTime(c.in)
		if err != nil || got != c.want || FormatTrainTime(got) != c.out {
			t.Errorf("%q: %v (%v), written %q; want %v, %q", c.in, got, err, FormatTrainTime(got), c.want, c.out)
		}
	}
	for _, bad := range []string{"soon", "-5m", "30", ""} {
		if _, err := ParseTrainTime(bad); err == nil || !strings.Contains(err.Error(), "30m") {
			t.Errorf("%q: %v, want an error with an example", bad, err)
		}
	}
}

// Sizes in bytes with binary and decimal units, and the refusals.
func TestParseByteSize(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
	}{{"12GiB", 12 << 30}, {"12gib", 12 << 30}, {"0.5 KiB", 512}, {"3MB", 3e6}, {"1TiB", 1 << 40}, {"7", 7}, {"7B", 7}, {"off", 0}, {"0", 0}} {
		if got, err := ParseByteSize(c.in); err != nil || got != c.want {
			t.Errorf("%q: %d (%v), want %d", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "GiB", "-1GiB", "1.5", "0.1B", "12 XB", "9EiB", "NaN", "inf"} {
		if got, err := ParseByteSize(bad); err == nil {
			t.Errorf("%q: %d, want an error", bad, got)
		}
	}
}
