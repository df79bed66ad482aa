#!/bin/sh
# Builds the Docker example's hook image, FROM scratch (no registry is
# needed): examples/docker/hook compiled static, plus /bin/busybox from
# Debian's busybox-static. Usage: build-image.sh [IMAGE]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
image=${1:-promptkit-examples/pii-hook:0.1.0}
if [ ! -x /bin/busybox ]; then
	echo "build-image.sh: /bin/busybox is missing (apt-get install busybox-static)" >&2
	exit 1
fi
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
CGO_ENABLED=0 go build -C "$here/hook" -trimpath -ldflags '-s -w' -o "$stage/pii-hook" .
cp /bin/busybox "$stage/busybox"
cp "$here/Dockerfile" "$stage/Dockerfile"
# The legacy builder's deprecation notice is noise: show output on failure only.
if ! out=$(docker build -q -t "$image" "$stage" 2>&1); then
	echo "$out" >&2
	exit 1
fi
echo "built $image"
