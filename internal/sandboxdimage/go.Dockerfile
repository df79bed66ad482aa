# The Go layer of the sandboxd images that serve Go, on the Debian base
# (or on the layer below it): the host's Go toolchain (Debian bookworm's
# golang-go is 1.19, too old for today's go.mod files), staticcheck and
# gopls, built on the host. internal/sandboxdimage builds it.
ARG PARENT
FROM ${PARENT}

COPY go/ /usr/local/go/
COPY staticcheck gopls /usr/local/bin/

# Everything that writes goes to /tmp, a tmpfs at run time: the root
# filesystem is read-only. GOTOOLCHAIN=local: there is no network to
# download another toolchain, so fail at once instead. CGO_ENABLED=0:
# the Go image has no C compiler.
ENV PATH=/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    GOCACHE=/tmp/.cache/go-build \
    GOPATH=/tmp/go \
    GOMODCACHE=/tmp/go/pkg/mod \
    GOTOOLCHAIN=local \
    CGO_ENABLED=0 \
    SANDBOXD_GOCACHE_SEED=/usr/local/share/sandboxd/go-build

# The standard library compiled once, here, with the environment above,
# and the vet facts go test computes for it (go test vets the package it
# tests with the facts of everything that package imports, and only
# go test's own analyzers make the facts it looks up): sandboxd copies
# this cache into GOCACHE when it starts, so the first go test of a
# fresh container compiles and vets the module alone. Without the
# library, 32 s for a one-package module on two cores, past an MCP
# client's 30 s; without the facts, a further 4 s for one importing fmt.
# The facts come from one go test of a package importing every public
# package of the library that builds here.
RUN GOCACHE="${SANDBOXD_GOCACHE_SEED}" go build std \
 && mkdir /tmp/seed && cd /tmp/seed \
 && printf 'module seed\n\ngo 1.21\n' > go.mod \
 && printf 'package seed\n' > seed.go \
 && { printf 'package seed\n\nimport (\n\t"testing"\n'; \
      go list -f '{{if .GoFiles}}{{.ImportPath}}{{end}}' std | grep . | grep -v -e internal -e vendor -e '^testing$' | sed 's/.*/\t_ "&"/'; \
      printf ')\n\nfunc TestSeed(*testing.T) {}\n'; } > seed_test.go \
 && GOCACHE="${SANDBOXD_GOCACHE_SEED}" go test -count=1 -run '^$' . \
 && cd / && rm -rf /tmp/seed /tmp/.cache /tmp/go \
 && rm -f "${SANDBOXD_GOCACHE_SEED}/trim.txt" \
 && chmod -R a+rX,go-w /usr/local/share/sandboxd
