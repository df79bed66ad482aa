#!/usr/bin/env python3
"""Exec hook: allow only the tools named in $ALLOWED_TOOLS (comma-separated).

Reads a tool before_execution request: {"hook":"tool","phase":...,
"request":{"Name":...,"Args":...,"CallID":...}}.
"""
import json
import os
import sys


def main():
    envelope = json.load(sys.stdin)
    allowed = {t.strip() for t in os.environ.get("ALLOWED_TOOLS", "").split(",") if t.strip()}
    request = envelope.get("request") or {}
    name = request.get("Name", "")
    if name in allowed:
        print(json.dumps({"allow": True}))
        return
    print(json.dumps({
        "allow": False,
        "reason": "tool %r is not on the allowlist (%s)" % (name, ", ".join(sorted(allowed)) or "empty"),
        "metadata": {"tool": name, "call_id": request.get("CallID", "")},
    }))


if __name__ == "__main__":
    main()
