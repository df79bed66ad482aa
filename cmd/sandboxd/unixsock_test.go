package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// TestListenLeavesOtherFilesAlone: directories made by another
// goroutine while sandboxd makes its socket get the mode the umask
// gives, not the socket's. The Go build cache seed is copied at that
// moment; when the socket was made under a umask of its own, some of its
// directories came out 0600, and the agent's go commands failed on them
// for the sandbox's whole life ("package context is not in std").
func TestListenLeavesOtherFilesAlone(t *testing.T) {
	sockDir, mkDir := t.TempDir(), t.TempDir()
	want := fs.FileMode(0o777) &^ umask(t)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if err := os.Mkdir(filepath.Join(mkDir, strconv.Itoa(i)), 0o777); err != nil {
				t.Error(err)
				return
			}
		}
	})
	for i := range 300 {
		ln, err := listen(unixPrefix + filepath.Join(sockDir, fmt.Sprintf("s%d", i)))
		if err != nil {
			t.Fatal(err)
		}
		if info, err := os.Lstat(ln.Addr().String()); err != nil || info.Mode().Perm() != socketMode {
			t.Fatalf("socket %s: %v (%v), want mode %v", ln.Addr(), info.Mode(), err, fs.FileMode(socketMode))
		}
		if err := ln.Close(); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	entries, err := os.ReadDir(mkDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		if info.Mode().Perm() != want {
			t.Fatalf("directory %s made meanwhile has mode %v, want %v (of %d made)", e.Name(), info.Mode().Perm(), want, len(entries))
		}
	}
	if left, _ := os.ReadDir(sockDir); len(left) != 0 {
		t.Errorf("left in the socket directory after Close: %v", left)
	}
}

// umask is this process's umask, read without setting it.
func umask(t *testing.T) fs.FileMode {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc/self/status to read the umask from: %v", err)
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "Umask:"); ok {
			m, err := strconv.ParseUint(strings.TrimSpace(v), 8, 32)
			if err != nil {
				t.Fatal(err)
			}
			return fs.FileMode(m)
		}
	}
	t.Skip("/proc/self/status names no umask")
	return 0
}
