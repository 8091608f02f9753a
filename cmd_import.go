package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"slices"
	"strconv"
	"time"

	"github.com/recsys-engine/recsys/api"
	"github.com/recsys-engine/recsys/handlers"
	"github.com/recsys-engine/recsys/recsys/dataset"
	"github.com/recsys-engine/recsys/storage"
	"github.com/recsys-engine/recsys/storage/backend"
	"github.com/recsys-engine/recsys/storage/dump"
	"github.com/recsys-engine/recsys/storage/postgres"
)

// importBatch is the number of events per write transaction during import.
const importBatch = 5000

func runImport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	fs.SetOutput(stderr)
	db := dbFlag(fs, "./recsys.db", "the `database`: a bbolt file, or postgres://user:pass@host:port/db (always imported incrementally) (env RECSYS_DB)")
	format := fs.String("format", "", "data format: movielens, lastfm or csv")
	minValue := fs.String("min-value", "", "smallest value that counts as relevant (default: 4 for movielens ratings, none otherwise)")
	itemsFile := fs.String("items", "", "also read item records from this `file` of JSON lines, one item per line as POST /items takes it ({\"id\":…,\"categories\":[…],\"features\":{…},\"labels\":{…}}); they replace the data set's own records of the same id")
	incremental := fs.Bool("incremental", false, "add the events in 5,000-event transactions through the store's write path even into a new database (the bulk load is used otherwise when the database is new)")
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
	if *itemsFile != "" {
		if _, err := os.Stat(*itemsFile); err != nil {
			return fmt.Errorf("--items: %w", err)
		}
	}
	src := itemSource{format: *format, path: path, extra: *itemsFile}
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

	start := time.Now()
	if !*incremental && !postgres.IsDSN(*db) {
		stats, err := bulkImport(ctx, *db, policy, src, stderr)
		switch {
		case err == nil:
			fmt.Fprintf(stdout, "imported %d events and %d item records from %s in %.1fs (bulk load into a new database)\n",
				stats.Events, stats.Items, path, time.Since(start).Seconds())
			printImportCounts(stdout, *db, stats.Counts, policy)
			return nil
		case errors.Is(err, dump.ErrNotEmpty):
			fmt.Fprintf(stdout, "%s already holds data: adding the events through the incremental path (5,000-event transactions)\n", postgres.Redact(*db))
		default:
			return err
		}
	}
	st, err := openStore(ctx, *db, policy, 0)
	if err != nil {
		return err
	}
	defer st.Close()
	nItems, err := importItems(ctx, st, src)
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
	printImportCounts(stdout, *db, c, policy)
	return nil
}

func printImportCounts(w io.Writer, db string, c api.Counts, policy api.Policy) {
	fmt.Fprintf(w, "store %s now holds %d users, %d items, %d interactions (%d relevant under %s)\n",
		postgres.Redact(db), c.Users, c.Items, c.Interactions, c.Positives, policy.String())
}

// bulkImport builds a new database at db from the data set in one pass
// (storage.BulkLoad), or returns dump.ErrNotEmpty, having read nothing,
// when db already holds data.
func bulkImport(ctx context.Context, db string, policy api.Policy, items itemSource, stderr io.Writer) (storage.BulkStats, error) {
	var bar *progress
	format, path := items.format, items.path
	src := storage.BulkSource{
		Items: items.read,
		Events: func(add func(api.Interaction) error) error {
			bar = newProgress(stderr, fileSize(dataset.EventsPath(format, path)), "reading events")
			err := readEvents(ctx, format, path, policy, bar, add)
			bar.finish()
			return err
		},
	}
	start := time.Now()
	progress := func(stage string) { fmt.Fprintf(stderr, "import: %5.1fs %s\n", time.Since(start).Seconds(), stage) }
	return storage.BulkLoad(db, storage.BulkOptions{Policy: policy, Progress: progress}, src)
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

func importItems(ctx context.Context, st backend.Store, src itemSource) (int, error) {
	b := batcher[api.Item]{store: func(items []api.Item) error { return st.PutItems(ctx, items) }}
	if err := src.read(b.add); err != nil {
		return b.n, err
	}
	return b.n, b.flush()
}

// itemSource is where an import's item records come from: the data set's
// own metadata, then the --items file if one is given.
type itemSource struct {
	format, path string
	extra        string // a JSON-lines file of items; "" for none
}

// read streams the records to put: the data set's, then the file's, so
// that a line of the file replaces the data set's record of its id.
func (s itemSource) read(put func(api.Item) error) error {
	if err := readItems(s.format, s.path, put); err != nil {
		return err
	}
	if s.extra == "" {
		return nil
	}
	f, err := os.Open(s.extra)
	if err != nil {
		return fmt.Errorf("--items: %w", err)
	}
	defer f.Close()
	return decodeItemLines(f, s.extra, runtime.GOMAXPROCS(0), put)
}

// itemChunk is a run of lines of an --items file, decoded by one worker:
// first is the number of its first line, items and err its result (err
// at the chunk's first bad line).
type itemChunk struct {
	first int
	lines [][]byte
	items []api.Item
	err   error
	done  chan struct{}
}

// itemChunkLines is how many lines a decoding worker takes at a time.
const itemChunkLines = 1024

// decodeItemLines decodes the JSON-lines items of r (named name in
// errors) on workers goroutines and passes them to put in file order, so
// that a later line of an id replaces an earlier one, and the error of
// the first bad line, in file order, is the one returned. Decoding and
// validation (handlers.DecodeItem) dominate reading: a million records of
// 16 features each take tens of seconds on one core.
func decodeItemLines(r io.Reader, name string, workers int, put func(api.Item) error) error {
	stop := make(chan struct{})
	defer close(stop)
	work := make(chan *itemChunk)
	ordered := make(chan *itemChunk, 2*workers)
	var readErr error
	go func() { // the reader: chunks to the workers, in order to the loop below
		defer close(ordered)
		defer close(work)
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), maxItemLine)
		c := &itemChunk{first: 1, done: make(chan struct{})}
		send := func(next int) bool {
			select {
			case ordered <- c:
			case <-stop:
				return false
			}
			select {
			case work <- c:
			case <-stop:
				return false
			}
			c = &itemChunk{first: next, done: make(chan struct{})}
			return true
		}
		n := 0
		for sc.Scan() {
			n++
			c.lines = append(c.lines, slices.Clone(sc.Bytes()))
			if len(c.lines) == itemChunkLines && !send(n+1) {
				return
			}
		}
		readErr = sc.Err() // read by the loop below after ordered closes
		if len(c.lines) > 0 {
			send(n + 1)
		}
	}()
	for range workers {
		go func() {
			for c := range work {
				c.items = make([]api.Item, 0, len(c.lines))
				for k, raw := range c.lines {
					line := bytes.TrimSpace(raw)
					if len(line) == 0 {
						continue
					}
					it, err := handlers.DecodeItem(line)
					if err != nil {
						var ae *api.Error
						if errors.As(err, &ae) {
							err = errors.New(ae.Message)
						}
						c.err = fmt.Errorf("%s line %d: %w", name, c.first+k, err)
						break
					}
					c.items = append(c.items, it)
				}
				c.lines = nil
				close(c.done)
			}
		}()
	}
	for c := range ordered {
		<-c.done
		for _, it := range c.items {
			if err := put(it); err != nil {
				return err
			}
		}
		if c.err != nil {
			return c.err
		}
	}
	if readErr != nil {
		return fmt.Errorf("%s: %w", name, readErr)
	}
	return nil
}

// maxItemLine bounds one line of an --items file: POST /items' body limit
// for a single item is far below it.
const maxItemLine = 16 << 20

// readItems streams the item records of a data set as the store takes them.
func readItems(format, path string, put func(api.Item) error) error {
	return dataset.ReadItems(format, path, func(it dataset.Item) error {
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
		return put(item)
	})
}

func importEvents(ctx context.Context, st backend.Store, format, path string, bar *progress) (int, error) {
	b := batcher[api.Interaction]{store: func(evs []api.Interaction) error {
		_, err := st.AddInteractions(ctx, evs)
		return err
	}}
	if err := readEvents(ctx, format, path, st.Policy(), bar, b.add); err != nil {
		return b.n, err
	}
	return b.n, b.flush()
}

// batcher hands records to store importBatch at a time; n counts the
// records stored.
type batcher[T any] struct {
	buf   []T
	n     int
	store func([]T) error
}

func (b *batcher[T]) add(x T) error {
	b.buf = append(b.buf, x)
	if len(b.buf) == importBatch {
		return b.flush()
	}
	return nil
}

func (b *batcher[T]) flush() error {
	if len(b.buf) == 0 {
		return nil
	}
	if err := b.store(b.buf); err != nil {
		return err
	}
	b.n += len(b.buf)
	b.buf = b.buf[:0]
	return nil
}

// readEvents streams the events of a data set, each checked (ids, and the
// relevance policy's verdict) so that an error names the event, not its
// place in a batch (a --min-value needs every event to carry a value).
func readEvents(ctx context.Context, format, path string, policy api.Policy, bar *progress, add func(api.Interaction) error) error {
	read := 0
	return dataset.ReadEvents(format, path, func(ev dataset.Event) error {
		read++
		if read%65536 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		for _, id := range []string{ev.User, ev.Item} {
			if p := api.ValidateID(id); p != "" {
				return fmt.Errorf("event %d: id %q %s", read, id, p)
			}
		}
		in := api.Interaction{UserID: ev.User, ItemID: ev.Item, Type: ev.Type,
			Value: ev.Value, HasValue: ev.HasValue, Timestamp: ev.Time}
		if _, _, err := policy.Judge(in); err != nil {
			return fmt.Errorf("event %d (user %q, item %q): %s", read, ev.User, ev.Item, api.ErrorMessage(err))
		}
		bar.add(len(ev.User) + len(ev.Item) + 12)
		return add(in)
	})
}
