package search

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// FilesRequest says which files Files lists.
type FilesRequest struct {
	// Dir is the directory to list, absolute inside the workspace or
	// relative to it; "" is the workspace root.
	Dir string
	// MaxDepth, when above 0, lists only that many levels down: 1 is the
	// files directly in Dir.
	MaxDepth int
	// Extensions, when set, keeps only files whose names end in one of
	// these (".go", ".py"...). They are checked after the ignore rules,
	// as an rg file type.
	Extensions []string
}

// filesType is the rg file type FilesRequest.Extensions define.
const filesType = "pksfiles"

// Files calls fn with the absolute path of every file under req.Dir that
// Glob would list (gitignored files and .git left out, links not
// followed), in no particular order. fn's argument is valid only during
// the call. A directory that does not exist is an error.
func (s *Searcher) Files(ctx context.Context, req FilesRequest, fn func(path string)) error {
	t, err := s.resolve(req.Dir)
	if err != nil {
		return fmt.Errorf("files: %w", err)
	}
	if !t.isDir {
		return fmt.Errorf("files: path %q is not a directory", req.Dir)
	}
	args := append(slices.Clip(baseArgs), "--files", "--null")
	if req.MaxDepth > 0 {
		args = append(args, "--max-depth="+strconv.Itoa(req.MaxDepth))
	}
	for _, ext := range req.Extensions {
		if ext == "" || strings.ContainsAny(ext, "*?[]{}/\\,") {
			return fmt.Errorf("files: extension %q is not a plain file name ending", ext)
		}
		args = append(args, "--type-add="+filesType+":*"+ext)
	}
	if len(req.Extensions) > 0 {
		args = append(args, "--type="+filesType)
	}
	args = append(args, "--", t.abs)
	run, err := s.start(ctx, args)
	if err != nil {
		return fmt.Errorf("files: %w", err)
	}
	var long []byte
	saw := false
	for {
		rec, cut, rerr := readRecord(run.out, 0, maxRecord, &long)
		saw = saw || len(rec) > 0
		if len(rec) > 0 && !cut {
			fn(string(rec))
		}
		if rerr != nil {
			break
		}
	}
	if _, err := run.wait(saw); err != nil {
		return fmt.Errorf("files: %w", err)
	}
	return nil
}
