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

# The standard library compiled once, here, with the environment above:
# sandboxd copies this cache into GOCACHE when it starts, so the first
# go test of a fresh container compiles the module alone (without it,
# 32 s for a one-package module on two cores, past an MCP client's 30 s).
RUN GOCACHE="${SANDBOXD_GOCACHE_SEED}" go build std \
 && rm -f "${SANDBOXD_GOCACHE_SEED}/trim.txt" \
 && chmod -R a+rX,go-w /usr/local/share/sandboxd
