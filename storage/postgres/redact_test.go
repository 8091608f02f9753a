package postgres

import "testing"

// TestRedact: every password a PostgreSQL URL can carry is masked, in the
// user information and in the query (password, sslpassword); a URL whose
// password's end cannot be told is not shown at all; a file name is
// shown as it is, but for the password of a keyword/value connection
// string given in its place.
func TestRedact(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"postgres://recsys:secret@127.0.0.1:5432/recsys", "postgres://recsys:xxxxx@127.0.0.1:5432/recsys"},
		{"postgresql://recsys:s%40cret@db.internal/recsys?sslmode=require", "postgresql://recsys:xxxxx@db.internal/recsys?sslmode=require"},
		{"postgres://recsys@db/recsys?password=secret&sslmode=disable", "postgres://recsys@db/recsys?password=xxxxx&sslmode=disable"},
		{"postgres://db/recsys?sslpassword=secret", "postgres://db/recsys?sslpassword=xxxxx"},
		{"postgres://recsys@db/recsys?sslmode=disable", "postgres://recsys@db/recsys?sslmode=disable"},
		{"postgres://recsys:sec/ret@db/recsys", "postgres://(a URL that does not parse, not shown)"},
		{"postgres://recsys:sec#ret@db/recsys", "postgres://(a URL that does not parse, not shown)"},
		{"postgres://recsys:secret@db:port/recsys", "postgres://(a URL that does not parse, not shown)"},
		{"./recsys.db", "./recsys.db"},
		{"/var/lib/recsys/data.db", "/var/lib/recsys/data.db"},
		{"host=db user=recsys password=secret dbname=recsys", "host=db user=recsys password=xxxxx dbname=recsys"},
		{"host=db PASSWORD = 'se cret' dbname=recsys", "host=db PASSWORD = xxxxx dbname=recsys"},
		{"host=db sslpassword=secret", "host=db sslpassword=xxxxx"},
	} {
		if got := Redact(c.in); got != c.want {
			t.Errorf("Redact(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
