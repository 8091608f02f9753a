#!/usr/bin/env bash
# Remakes the schema fixtures: a small database of every earlier schema
# version of each store, written by the code of that version running the
# workload of storage/storagetest/schemafill*.go.
#
#   storage/testdata/schema/make.sh [NAME...]    (from the repository root)
#
# remakes the fixtures named (v1-json, v1, … for bbolt; pg-v1, … for
# PostgreSQL), or all of them.
#
# Each version's code is the newest commit on the main line (first parents)
# whose tree has that schema, found from the history: it is checked out in
# a temporary worktree, where a small program runs the workload against
# its store. The bbolt fixtures are NAME.bolt (and NAME.bolt.events/, the
# event log, from version 4 on) here; the PostgreSQL fixtures are plain SQL
# dumps of the schema the old code made, in storage/postgres/testdata/schema,
# made on the server $RECSYS_TEST_POSTGRES names, with pg_dump.
set -euo pipefail
root=$(git rev-parse --show-toplevel)
cd "$root"
dsn=${RECSYS_TEST_POSTGRES:-}
want=" $* "
out=$root/storage/testdata/schema
pgout=$root/storage/postgres/testdata/schema
tmp=$(mktemp -d)
trap 'for w in "$tmp"/wt-*; do [ -d "$w" ] && git worktree remove --force "$w"; done; rm -rf "$tmp"' EXIT

# newest COND: the newest first-parent commit for which COND (a shell
# command, given the commit as $1) succeeds.
newest() {
  local c
  for c in $(git log --first-parent --format=%H); do
    if "$@" "$c"; then echo "$c"; return; fi
  done
  echo "no commit found for: $*" >&2
  exit 1
}
bolt_version() { git show "$1:storage/schema.go" 2>/dev/null | grep -q "const SchemaVersion = $2\$"; }
bolt_v1_json() { bolt_version "$1" 1 && git show "$1:storage/records.go" | grep -q 'json:"idx"'; }
bolt_v1() { bolt_version "$1" 1; }
bolt_v2() { bolt_version "$1" 2; }
bolt_v3() { bolt_version "$1" 3; }
bolt_v4() { bolt_version "$1" 4 && ! git show "$1:storage/schema.go" | grep -q 'bucketImps *='; }
bolt_v4_online() { bolt_version "$1" 4 && git show "$1:storage/schema.go" | grep -q 'bucketImps *='; }
bolt_v5() { bolt_version "$1" 5; }
bolt_v6() { bolt_version "$1" 6; }
pg_migrations() { [ "$(git ls-tree --name-only "$1" storage/postgres/migrations/ 2>/dev/null | wc -l)" = "$2" ]; }
pg_v1() { pg_migrations "$1" 1; }
pg_v2() { pg_migrations "$1" 2; }
pg_v3() { pg_migrations "$1" 3; }
pg_v5() { pg_migrations "$1" 5; }

# checkout NAME COMMIT [online]: a worktree of COMMIT with the generator in
# fixturegen/, the workload copied in as package main.
checkout() {
  local wt=$tmp/wt-$1
  git worktree add --detach --quiet "$wt" "$2"
  mkdir "$wt/fixturegen"
  sed 's/^package storagetest$/package main/' storage/storagetest/schemafill.go >"$wt/fixturegen/schemafill.go"
  if [ "${3:-}" = online ]; then
    sed 's/^package storagetest$/package main/' storage/storagetest/schemafill_online.go >"$wt/fixturegen/schemafill_online.go"
    echo 'func init() { fillOnline = func(ctx context.Context, s any) error { return SchemaFillOnline(ctx, s.(SchemaFillOnlineStore)) } }' \
      >>"$wt/fixturegen/schemafill_online.go"
  fi
  echo "$wt"
}

# module WT: rewrite the imports of the generator to the module path of
# the worktree (recsys, later github.com/recsys-engine/recsys).
module() {
  local m
  m=$(awk '/^module /{print $2; exit}' "$1/go.mod")
  sed -i "s#\"recsys/#\"$m/#" "$1/fixturegen/main.go"
}

bolt() { # NAME COND [online]
  local c wt
  c=$(newest "$2")
  wt=$(checkout "$1" "$c" "${3:-}")
  cat >"$wt/fixturegen/main.go" <<'GO'
package main

import (
	"context"
	"log"
	"os"

	"recsys/storage"
)

var fillOnline func(ctx context.Context, s any) error

func main() {
	ctx := context.Background()
	s, err := storage.Open(os.Args[1], storage.Options{Now: SchemaFillNow})
	if err != nil {
		log.Fatal(err)
	}
	if err := SchemaFill(ctx, s); err != nil {
		log.Fatal(err)
	}
	if fillOnline != nil {
		if err := fillOnline(ctx, s); err != nil {
			log.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		log.Fatal(err)
	}
}
GO
  module "$wt"
  rm -rf "$out/$1.bolt" "$out/$1.bolt.events"
  (cd "$wt" && go run ./fixturegen "$out/$1.bolt")
  echo "$1.bolt: $(git log -1 --format='%ad %s' --date=short "$c" | cut -c1-90)"
}

pg() { # NAME COND [online]
  local c wt schema
  c=$(newest "$2")
  wt=$(checkout "pg-$1" "$c" "${3:-}")
  cat >"$wt/fixturegen/main.go" <<'GO'
package main

import (
	"context"
	"log"
	"os"

	"recsys/storage/postgres"
)

var fillOnline func(ctx context.Context, s any) error

func main() {
	ctx := context.Background()
	s, err := postgres.Open(ctx, os.Args[1], postgres.Options{Now: SchemaFillNow})
	if err != nil {
		log.Fatal(err)
	}
	if err := SchemaFill(ctx, s); err != nil {
		log.Fatal(err)
	}
	if fillOnline != nil {
		if err := fillOnline(ctx, s); err != nil {
			log.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		log.Fatal(err)
	}
}
GO
  module "$wt"
  schema=fixture_$1
  PGOPTIONS=--client-min-messages=warning psql -q "$dsn" -c "DROP SCHEMA IF EXISTS $schema CASCADE" -c "CREATE SCHEMA $schema"
  local sdsn="$dsn"
  case "$sdsn" in *\?*) sdsn="$sdsn&search_path=$schema" ;; *) sdsn="$sdsn?search_path=$schema" ;; esac
  (cd "$wt" && go run ./fixturegen "$sdsn")
  # Plain INSERTs (no COPY, which needs psql), the schema's name as a
  # placeholder the tests replace, no CREATE SCHEMA (the test makes it)
  # and none of psql's meta-commands (\restrict).
  pg_dump --dbname="$dsn" --schema="$schema" --no-owner --no-privileges --inserts --quote-all-identifiers |
    grep -v -e '^CREATE SCHEMA ' -e '^\\' | sed "s/$schema/__SCHEMA__/g" >"$pgout/$1.sql"
  PGOPTIONS=--client-min-messages=warning psql -q "$dsn" -c "DROP SCHEMA $schema CASCADE"
  echo "$1.sql: $(git log -1 --format='%ad %s' --date=short "$c" | cut -c1-90)"
}

# make NAME: whether NAME is to be made (every fixture when none is named).
make() { [ "$want" = "  " ] || [[ "$want" == *" $1 "* ]]; }
make v1-json && bolt v1-json bolt_v1_json
make v1 && bolt v1 bolt_v1
make v2 && bolt v2 bolt_v2
make v3 && bolt v3 bolt_v3
make v4 && bolt v4 bolt_v4
make v4-online && bolt v4-online bolt_v4_online online
make v5 && bolt v5 bolt_v5 online
make v6 && bolt v6 bolt_v6 online
if [ -z "$dsn" ]; then
  echo "RECSYS_TEST_POSTGRES is not set: the PostgreSQL fixtures are left as they are" >&2
  exit 0
fi
make pg-v1 && pg v1 pg_v1
make pg-v2 && pg v2 pg_v2
make pg-v3 && pg v3 pg_v3 online
make pg-v5 && pg v5 pg_v5 online
exit 0
