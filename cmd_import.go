package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"time"

	"recsys/api"
	"recsys/recsys/dataset"
	"recsys/storage"
)

// importBatch is the number of events per write transaction during import.
const importBatch = 5000

func runImport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	fs.SetOutput(stderr)
	db := fs.String("db", envOr("RECSYS_DB", "./recsys.db"), "bbolt database file")
	format := fs.String("format", "", "data format: movielens, lastfm or csv")
	minValue := fs.String("min-value", "", "smallest value that counts as relevant (default: 4 for movielens ratings, none otherwise)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("import needs exactly one PATH (a MovieLens folder, a Last.fm folder or file, or a CSV file)")
	}
	path := fs.Arg(0)
	if err := dataset.CheckFormat(*format); err != nil {
		return fmt.Errorf("--format: %w", err)
	}
	if _, err := os.Stat(dataset.EventsPath(*format, path)); err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	policy, typ := api.DefaultPolicy(), importType(*format)
	if *minValue != "" {
		v, err := strconv.ParseFloat(*minValue, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("--min-value %q is not a finite number", *minValue)
		}
		policy = policy.WithMin(typ, v)
	} else if v, ok := dataset.DefaultMinValue(*format); ok {
		policy = policy.WithMin(typ, v)
	}
	st, err := storage.Open(*db, storage.Options{Policy: policy})
	if err != nil {
		return err
	}
	defer st.Close()

	start := time.Now()
	nItems, err := importItems(ctx, st, *format, path)
	if err != nil {
		return err
	}
	bar := newProgress(stderr, fileSize(dataset.EventsPath(*format, path)), "importing events")
	nEvents, err := importEvents(ctx, st, *format, path, bar)
	bar.finish()
	if err != nil {
		return err
	}
	c, err := st.Counts(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "imported %d events and %d item records from %s in %.1fs\n", nEvents, nItems, path, time.Since(start).Seconds())
	fmt.Fprintf(stdout, "store %s now holds %d users, %d items, %d interactions (%d relevant under %s)\n",
		*db, c.Users, c.Items, c.Interactions, c.Positives, policy.String())
	return nil
}

// importType is the interaction type a format's events carry.
func importType(format string) string {
	switch format {
	case "movielens":
		return "rating"
	case "lastfm":
		return "play"
	}
	return "view"
}

func importItems(ctx context.Context, st *storage.Store, format, path string) (int, error) {
	var batch []api.Item
	n := 0
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		err := st.PutItems(ctx, batch)
		n += len(batch)
		batch = batch[:0]
		return err
	}
	err := dataset.ReadItems(format, path, func(it dataset.Item) error {
		item := api.Item{ID: it.ID, Features: it.Features, Categories: it.Categories}
		if it.Label != "" {
			key := "title"
			if format == "lastfm" {
				key = "name"
			}
			item.Labels = map[string]string{key: it.Label}
		}
		if p := api.ValidateID(it.ID); p != "" {
			return fmt.Errorf("item id %q %s", it.ID, p)
		}
		batch = append(batch, item)
		if len(batch) == importBatch {
			return flush()
		}
		return nil
	})
	if err != nil {
		return n, err
	}
	return n, flush()
}

func importEvents(ctx context.Context, st *storage.Store, format, path string, bar *progress) (int, error) {
	policy := st.Policy()
	batch := make([]api.Interaction, 0, importBatch)
	n := 0
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		if _, err := st.AddInteractions(ctx, batch); err != nil {
			return err
		}
		n += len(batch)
		batch = batch[:0]
		return nil
	}
	read := 0
	err := dataset.ReadEvents(format, path, func(ev dataset.Event) error {
		read++
		for _, id := range []string{ev.User, ev.Item} {
			if p := api.ValidateID(id); p != "" {
				return fmt.Errorf("event %d: id %q %s", read, id, p)
			}
		}
		in := api.Interaction{UserID: ev.User, ItemID: ev.Item, Type: ev.Type,
			Value: ev.Value, HasValue: ev.HasValue, Timestamp: ev.Time}
		// Checked here so that the error names the event, not its place
		// in a batch (a --min-value needs every event to carry a value).
		if _, _, err := policy.Judge(in); err != nil {
			return fmt.Errorf("event %d (user %q, item %q): %s", read, ev.User, ev.Item, api.ErrorMessage(err))
		}
		batch = append(batch, in)
		bar.add(len(ev.User) + len(ev.Item) + 12)
		if len(batch) == importBatch {
			return flush()
		}
		return nil
	})
	if err != nil {
		return n, err
	}
	return n, flush()
}

func fileSize(name string) int64 {
	if st, err := os.Stat(name); err == nil {
		return st.Size()
	}
	return -1
}
