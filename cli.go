package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
)

// parseFlags parses a command's flags. A bad flag is one error line that
// ends the output, with a hint, instead of the error above the command's
// whole usage (which buried it); -h still prints the usage.
func parseFlags(fs *flag.FlagSet, args []string) error {
	out := fs.Output()
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	fs.SetOutput(out)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprintf(out, "Usage of recsys %s:\n", fs.Name())
		fs.PrintDefaults()
		return err
	case err != nil:
		return fmt.Errorf("%s: %w (run 'recsys %s -h' for the flags)", fs.Name(), err, fs.Name())
	}
	return nil
}

// checkDatabase fails, naming the path, when there is no database at path:
// bbolt would create an empty one, so a mistyped --db given to a command
// that reads the store would leave a stray file and fail later, far from
// the typo.
func checkDatabase(path string) error {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("--db: no database at %s; run 'recsys import --db %s ...' or 'recsys serve --db %s' first", path, path, path)
	case err != nil:
		return fmt.Errorf("--db: %w", err)
	case fi.IsDir():
		return fmt.Errorf("--db: %s is a directory, not a database file", path)
	}
	return nil
}
