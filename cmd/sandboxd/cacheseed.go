package main

import (
	"log/slog"
	"strings"
	"time"

	"github.com/altairalabs/promptkit-sandbox/cmd/sandboxd/internal/cacheseed"
)

// seedEnv names a read-only Go build cache to copy into the agent's
// GOCACHE at start: the sandboxd image sets it to the standard library
// it compiled when it was built.
const seedEnv = "SANDBOXD_GOCACHE_SEED"

// seedGoCache copies the seed into the GOCACHE of env in the background,
// so that start does not wait for it: a go command that runs meanwhile
// finds whole entries or none (package cacheseed), and the server's runs
// wait for the channel it returns, closed once the copy has ended; nil
// when there is nothing to copy. Only when sandboxd runs as the agent's
// own user: as root it would write, as root, into a directory the agent
// controls.
func seedGoCache(log *slog.Logger, getenv func(string) string, env []string, runAs bool) <-chan struct{} {
	seed := getenv(seedEnv)
	if seed == "" {
		return nil
	}
	gocache := lastValue(env, "GOCACHE")
	switch {
	case gocache == "" || gocache == "off":
		log.Debug("not seeding the Go build cache: GOCACHE is not set in the agent's environment", "seed", seed)
		return nil
	case runAs:
		log.Info("not seeding the Go build cache: the agent's commands run as another user", "seed", seed)
		return nil
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		start := time.Now()
		res, err := cacheseed.Copy(seed, gocache)
		if err != nil {
			log.Warn("seeding the Go build cache", "err", err, "copied", res.Files)
			return
		}
		log.Info("seeded the Go build cache", "gocache", gocache, "files", res.Files, "bytes", res.Bytes,
			"already_present", res.Present, "took", time.Since(start).Round(time.Millisecond))
	}()
	return done
}

// lastValue is the value of the last KEY= entry of env, as exec takes it.
func lastValue(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], key+"="); ok {
			return v
		}
	}
	return ""
}
