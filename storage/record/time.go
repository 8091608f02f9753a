package record

import "time"

// Both stores keep times as Unix nanoseconds, 0 for none, and count events
// per UTC day of their time.

// UnixNano is t in Unix ns, 0 for the zero time.
func UnixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// FromNano is the UTC time of Unix ns n, the zero time for 0.
func FromNano(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// DayOf is the per-day counter key (YYYYMMDD, UTC) of a time in Unix ns.
func DayOf(ts int64) string { return FromNano(ts).Format("20060102") }

// DayNumber is the day number of a time in Unix ns: whole UTC days since
// 1970-01-01, the day a snapshot gives each pair (api.Snapshot.Days).
func DayNumber(ts int64) int32 {
	const day = 86400 * int64(1e9)
	d := ts / day
	if ts < 0 && ts%day != 0 {
		d--
	}
	return int32(d)
}
