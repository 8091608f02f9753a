package main

import (
	"context"
	"errors"
	"io"
)

var evalCommand = func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return errors.New("eval: not wired yet")
}
