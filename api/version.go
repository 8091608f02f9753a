package api

// VersionOut answers GET /version, and is what `recsys version --json`
// prints: the build, the schema version this binary writes for each store,
// and the schema version of the database in use.
type VersionOut struct {
	// Version is the module version; "(devel)" for a build from a checkout
	// that no release tag names.
	Version string `json:"version"`
	// Revision and Time are the VCS commit the binary was built from and
	// its time (RFC 3339, UTC); empty when the build recorded none.
	Revision string `json:"revision,omitempty"`
	Time     string `json:"time,omitempty"`
	// Modified is set when the tree it was built from had uncommitted
	// changes.
	Modified bool           `json:"modified"`
	Go       string         `json:"go"`
	Schemas  SchemaVersions `json:"schemas"`
	// Store is the database the server runs on (GET /version) or the one
	// --db names (recsys version); absent otherwise.
	Store *StoreSchema `json:"store,omitempty"`
}

// SchemaVersions are the schema versions this binary writes: it migrates
// an older database to them at a writable open and refuses a newer one.
type SchemaVersions struct {
	Bolt     int `json:"bbolt"`
	Postgres int `json:"postgres"`
}

// StoreSchema is the schema version a database holds.
type StoreSchema struct {
	Kind   string `json:"kind"` // bbolt or postgres
	Schema int    `json:"schema"`
}
