package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeFlags_timeoutsAndSize checks the connection-timeout and
// database-size flags: defaults, and a clear refusal of values that would
// cut off an answer or make no sense.
func TestServeFlags_timeoutsAndSize(t *testing.T) {
	c, err := parseServeFlags(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.Server != DefaultServerTimeouts || c.MaxDBSize != 0 {
		t.Fatalf("defaults: %+v, max-db-size %d", c.Server, c.MaxDBSize)
	}
	c, err = parseServeFlags([]string{"--read-header-timeout", "1s", "--read-timeout", "2s", "--write-timeout", "20s",
		"--idle-timeout", "3s", "--max-db-size", "1048576"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if want := (ServerTimeouts{ReadHeader: 1e9, Read: 2e9, Write: 20e9, Idle: 3e9}); c.Server != want || c.MaxDBSize != 1<<20 {
		t.Fatalf("parsed %+v, max-db-size %d", c.Server, c.MaxDBSize)
	}
	for _, bad := range []struct {
		args []string
		says string
	}{
		{[]string{"--write-timeout", "5s"}, "must exceed --request-timeout"},
		{[]string{"--read-header-timeout", "0s"}, "must be positive"},
		{[]string{"--idle-timeout", "-1s"}, "must be positive"},
		{[]string{"--max-db-size", "-1"}, "--max-db-size"},
	} {
		if _, err := parseServeFlags(bad.args, io.Discard); err == nil || !strings.Contains(err.Error(), bad.says) {
			t.Errorf("%v: err %v, want one saying %q", bad.args, err, bad.says)
		}
	}
}

// TestMinValue_finite: import and eval refuse a --min-value that is not a
// finite number (NaN would make every event relevant) before touching data.
func TestMinValue_finite(t *testing.T) {
	dir := t.TempDir()
	csv := filepath.Join(dir, "e.csv")
	if err := os.WriteFile(csv, []byte("u,i,1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "x.db")
	for _, v := range []string{"NaN", "Inf", "-inf", "x"} {
		err := runImport(t.Context(), []string{"--db", db, "--format", "csv", "--min-value", v, csv}, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "finite") && v != "x" {
			t.Errorf("import --min-value %s: %v", v, err)
		}
		err = runEval(t.Context(), []string{"--data", csv, "--format", "csv", "--min-value", v}, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "--min-value") {
			t.Errorf("eval --min-value %s: %v", v, err)
		}
	}
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Errorf("a refused import created the database: %v", err)
	}
}

// TestServeFlags_coldSlots: --cold-slots-per-10 defaults to 1, 0 turns the
// cold slots off (Config's zero value means the default, so "off" is
// negative there), and values outside 0..10 are refused.
func TestServeFlags_coldSlots(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want int
	}{
		{nil, 1},
		{[]string{"--cold-slots-per-10", "3"}, 3},
		{[]string{"--cold-slots-per-10", "0"}, -1},
	} {
		c, err := parseServeFlags(tc.args, io.Discard)
		if err != nil || c.ColdSlotsPer10 != tc.want {
			t.Errorf("%v: ColdSlotsPer10 %d (err %v), want %d", tc.args, c.ColdSlotsPer10, err, tc.want)
		}
	}
	t.Setenv("RECSYS_COLD_SLOTS_PER_10", "2")
	if c, err := parseServeFlags(nil, io.Discard); err != nil || c.ColdSlotsPer10 != 2 {
		t.Errorf("env 2: ColdSlotsPer10 %d (err %v)", c.ColdSlotsPer10, err)
	}
	for _, bad := range []string{"-1", "11"} {
		if _, err := parseServeFlags([]string{"--cold-slots-per-10", bad}, io.Discard); err == nil || !strings.Contains(err.Error(), "--cold-slots-per-10") {
			t.Errorf("--cold-slots-per-10 %s: err %v, want one naming the flag", bad, err)
		}
	}
}
