// Command build-sandboxd-image builds the sandboxd container image,
// promptkit/sandboxd:VERSION, unless the engine already has one built from
// the same inputs, and prints its reference. `make sandboxd-image` runs it
// from the repository's root.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/sandboxdimage"
	"github.com/altairalabs/promptkit-sandbox/shared/codegenimage"
)

func main() {
	version := flag.String("version", codegenimage.Version, "the image's tag and sandboxd's version")
	flag.Parse()
	if err := run(*version); err != nil {
		fmt.Fprintln(os.Stderr, "build-sandboxd-image:", err)
		os.Exit(1)
	}
}

func run(version string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	res, err := sandboxdimage.Ensure(ctx, sandboxdimage.Options{Version: version, Log: os.Stderr})
	if err != nil {
		return err
	}
	what := "up to date"
	if res.Built {
		what = "built"
	}
	fmt.Printf("%s %s in %s\n", res.Ref, what, time.Since(start).Round(time.Millisecond))
	return nil
}
