#!/usr/bin/env bash
# generate.sh regenerates sandbox.pb.go and sandbox_grpc.pb.go from
# sandbox.proto with pinned generators, so the committed files can be
# reproduced byte for byte (`make generate` runs this script).
#
#   protoc              libprotoc 3.21.12  (Debian: apt-get install protobuf-compiler)
#   protoc-gen-go       v1.36.12           (installed into bin/tools when missing)
#   protoc-gen-go-grpc  1.5.1              (installed into bin/tools when missing)
#
# Environment:
#   GENERATE_OUT=DIR     write the generated files to DIR instead of beside
#                        sandbox.proto (TestGeneratedCodeIsFresh uses this)
#   GENERATE_INSTALL=0   do not install missing plugins: exit 3 instead
#
# Exit status 3 means a generator is missing or at the wrong version; the
# message says which and how to get it.
set -euo pipefail

PROTOC_WANT="libprotoc 3.21.12"
GEN_GO_VERSION="v1.36.12"
GEN_GO_GRPC_VERSION="1.5.1"

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
tools="$root/bin/tools"
out="${GENERATE_OUT:-$here}"

missing() {
	echo "generate.sh: $*" >&2
	exit 3
}

# find_tool NAME VERSION prints the path of an executable NAME whose
# --version output is "NAME VERSION": bin/tools first, then PATH.
find_tool() {
	local name=$1 want=$2 path
	for path in "$tools/$name" "$(command -v "$name" || true)"; do
		if [ -n "$path" ] && [ -x "$path" ] && [ "$("$path" --version 2>/dev/null)" = "$name $want" ]; then
			echo "$path"
			return 0
		fi
	done
	return 1
}

# plugin NAME VERSION MODULE prints the path of the pinned plugin,
# installing it into bin/tools when it is not there yet.
plugin() {
	local name=$1 version=$2 module=$3 path
	if path=$(find_tool "$name" "$version"); then
		echo "$path"
		return 0
	fi
	if [ "${GENERATE_INSTALL:-1}" = 0 ]; then
		missing "$name $version not found in $tools or PATH; install it with:
  GOFLAGS= GOBIN=$tools go install $module@v${version#v}"
	fi
	echo "generate.sh: installing $name $version into $tools" >&2
	GOFLAGS= GOBIN="$tools" go install "$module@v${version#v}" >&2
	find_tool "$name" "$version" || missing "$name $version: installed, but $tools/$name reports another version"
}

if ! command -v protoc >/dev/null 2>&1; then
	missing "protoc not found; install $PROTOC_WANT (Debian: apt-get install protobuf-compiler)"
fi
if [ "$(protoc --version)" != "$PROTOC_WANT" ]; then
	missing "protoc is '$(protoc --version)' ($(command -v protoc)), want '$PROTOC_WANT' (Debian bookworm: apt-get install protobuf-compiler)"
fi

gen_go=$(plugin protoc-gen-go "$GEN_GO_VERSION" google.golang.org/protobuf/cmd/protoc-gen-go)
gen_go_grpc=$(plugin protoc-gen-go-grpc "$GEN_GO_GRPC_VERSION" google.golang.org/grpc/cmd/protoc-gen-go-grpc)

mkdir -p "$out"
cd "$here"
protoc \
	--proto_path=. \
	--plugin=protoc-gen-go="$gen_go" \
	--plugin=protoc-gen-go-grpc="$gen_go_grpc" \
	--go_out="$out" --go_opt=paths=source_relative \
	--go-grpc_out="$out" --go-grpc_opt=paths=source_relative \
	sandbox.proto
