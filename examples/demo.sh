#!/bin/sh
# Runs every example hook on its sample payloads through the direct sandbox
# and prints each decision. Usage: examples/demo.sh [path/to/promptkit-sandbox]
set -u
here=$(cd "$(dirname "$0")" && pwd)
cli=${1:-$here/../bin/promptkit-sandbox}
cfg=$here/runtime.yaml
if [ -z "${AUDIT_LOG:-}" ]; then
	AUDIT_LOG=$(mktemp "${TMPDIR:-/tmp}/promptkit-audit.XXXXXX")
	trap 'rm -f "$AUDIT_LOG"' EXIT
fi
export AUDIT_LOG

"$cli" validate --config "$cfg" || exit 1
echo

failed=0
run() { # hook phase payload expected-exit
	printf '%-15s %-17s %-36s ' "$1" "${2:--}" "$3"
	if [ -n "$2" ]; then
		out=$("$cli" hook run --config "$cfg" --hook "$1" --phase "$2" --input "$here/payloads/$3")
	else
		out=$("$cli" hook run --config "$cfg" --hook "$1" --input "$here/payloads/$3")
	fi
	code=$?
	echo "exit $code $out"
	[ "$code" = "$4" ] || { echo "  ^ expected exit $4"; failed=1; }
}

run pii_filter     before_call      provider_before_call_clean.json    0
run pii_filter     before_call      provider_before_call_ssn.json      1
run pii_filter     after_call       provider_after_call.json           0
run pii_filter     after_call       provider_after_call_ssn.json       1
run tool_allowlist before_execution tool_before_execution_allowed.json 0
run tool_allowlist before_execution tool_before_execution_denied.json  1
run audit_log      session_start    session_start.json                 0
run audit_log      session_update   session_update.json                0
run audit_log      session_end      session_end.json                   0
run eval_audit     ""               eval_result.json                   0

echo
echo "audit log ($AUDIT_LOG), written by the observe hooks:"
cat "$AUDIT_LOG"
exit $failed
