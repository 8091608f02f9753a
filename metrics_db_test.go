package main

import (
	"os"
	"strconv"
	"testing"
)

// /metrics gives the bbolt file's size, as the file system sees it, and
// the part of it in free pages (recsys compact's gain).
func TestMetrics_dbSize(t *testing.T) {
	var db string
	a := startApp(t, func(c *Config) { db = c.DB })
	size, err := strconv.ParseFloat(metricValue(t, a, "recsys_db_bytes"), 64)
	if err != nil {
		t.Fatal(err)
	}
	free, err := strconv.ParseFloat(metricValue(t, a, "recsys_db_free_bytes"), 64)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(db)
	if err != nil {
		t.Fatal(err)
	}
	if size != float64(fi.Size()) || free < 0 || free >= size {
		t.Fatalf("recsys_db_bytes %v (file %d), recsys_db_free_bytes %v", size, fi.Size(), free)
	}
}
