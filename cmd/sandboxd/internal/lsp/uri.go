package lsp

import (
	"fmt"
	"net/url"
	"path/filepath"
)

// fileURI is the file: URI of an absolute path.
func fileURI(path string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(path)}).String()
}

// uriPath is the path a file: URI names.
func uriPath(uri string) (string, error) {
	u, err := url.Parse(uri)
	if err != nil {
		return "", fmt.Errorf("language server sent a bad URI %q: %w", uri, err)
	}
	if u.Scheme != "file" {
		return "", fmt.Errorf("language server sent a URI that is not a file: %q", uri)
	}
	return filepath.FromSlash(u.Path), nil
}
