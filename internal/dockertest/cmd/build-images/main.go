// Command build-images builds every test image of package dockertest that
// the engine does not have yet and prints one "name ref" line per image.
// `make images` runs it, so the first test run does not pay for the builds.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/altairalabs/promptkit-sandbox/internal/dockertest"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "build-images:", err)
		os.Exit(1)
	}
}

func run() error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	refs, err := dockertest.BuildAll(ctx)
	if err != nil {
		return err
	}
	for _, name := range dockertest.Names() {
		fmt.Println(name, refs[name])
	}
	return nil
}
