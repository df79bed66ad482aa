#!/bin/sh
# Runs the Docker example: builds the hook image if it is missing, starts
# the sidecar container, and runs the PII filter on sample payloads in a
# fresh container per call (docker_run) and in the sidecar (docker_exec).
# Usage: examples/docker/demo.sh [path/to/promptkit-sandbox [plugin-dir]]
set -u
here=$(cd "$(dirname "$0")" && pwd)
cli=${1:-$here/../../bin/promptkit-sandbox}
plugins=${2:-$here/../../bin/plugins}
cfg=$here/runtime.yaml
payloads=$here/../payloads
image=promptkit-examples/pii-hook:0.1.0
sidecar=promptkit-hooks-sidecar

docker image inspect "$image" >/dev/null 2>&1 || "$here/build-image.sh" "$image" || exit 1
docker rm -f "$sidecar" >/dev/null 2>&1
docker run -d --name "$sidecar" --network none --init --label org.promptkit.example=1 \
	"$image" sleep 2147483647 >/dev/null || exit 1
trap 'docker rm -f "$sidecar" >/dev/null 2>&1' EXIT

"$cli" validate --plugin-dir "$plugins" --config "$cfg" || exit 1
echo

failed=0
run() { # hook phase payload expected-exit
	printf '%-12s %-12s %-34s ' "$1" "$2" "$3"
	out=$("$cli" hook run --plugin-dir "$plugins" --config "$cfg" --hook "$1" --phase "$2" --input "$payloads/$3")
	code=$?
	echo "exit $code $out"
	[ "$code" = "$4" ] || { echo "  ^ expected exit $4"; failed=1; }
}

for hook in pii_fresh pii_sidecar; do
	run "$hook" before_call provider_before_call_clean.json 0
	run "$hook" before_call provider_before_call_ssn.json   1
	run "$hook" after_call  provider_after_call.json        0
	run "$hook" after_call  provider_after_call_ssn.json    1
done
exit $failed
