// Command build-sandboxd-image builds sandboxd container images unless
// the engine already has them built from the same inputs, and prints
// their references. `make sandboxd-image` runs it for the default (Go)
// image, `make sandboxd-images` with -each for one image per language.
//
//	build-sandboxd-image                      promptkit/sandboxd:VERSION (Go)
//	build-sandboxd-image -languages python    promptkit/sandboxd-python:VERSION
//	build-sandboxd-image -languages go,python one image serving both
//	build-sandboxd-image -each                one image per language
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/altairalabs/promptkit-sandbox/internal/codegenimage"
	"github.com/altairalabs/promptkit-sandbox/internal/sandboxdimage"
)

func main() {
	version := flag.String("version", codegenimage.Version, "the images' tag and sandboxd's version")
	languages := flag.String("languages", codegenimage.DefaultLanguage, "the languages one image serves, comma-separated ("+strings.Join(codegenimage.Languages, ", ")+")")
	each := flag.Bool("each", false, "build one image per language instead")
	flag.Parse()
	sets := [][]string{}
	if *each {
		for _, l := range codegenimage.Languages {
			sets = append(sets, []string{l})
		}
	} else {
		langs, err := codegenimage.ParseLanguages(*languages)
		if err != nil {
			fmt.Fprintln(os.Stderr, "build-sandboxd-image: -languages:", err)
			os.Exit(2)
		}
		sets = append(sets, langs)
	}
	if err := run(*version, sets); err != nil {
		fmt.Fprintln(os.Stderr, "build-sandboxd-image:", err)
		os.Exit(1)
	}
}

func run(version string, sets [][]string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	for _, langs := range sets {
		start := time.Now()
		res, err := sandboxdimage.Ensure(ctx, sandboxdimage.Options{Version: version, Languages: langs, Log: os.Stderr})
		if err != nil {
			return err
		}
		what := "up to date"
		if res.Built {
			what = "built"
		}
		fmt.Printf("%s %s in %s\n", res.Ref, what, time.Since(start).Round(time.Millisecond))
	}
	return nil
}
