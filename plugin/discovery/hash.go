package discovery

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
)

// SHA256 returns the hex SHA-256 of the file at path. It streams the file:
// plugin binaries are tens of megabytes and are hashed on every launch.
func SHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("hash plugin file: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("hash plugin file %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
