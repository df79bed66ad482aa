#!/usr/bin/env python3
"""Exec hook (observe): append one JSON line per event to $AUDIT_LOG.

Session hooks get an envelope {"hook":"session","phase":...,"event":{...}};
eval hooks get the raw eval result ({"eval_id":...,"type":...}). Without
AUDIT_LOG the line goes to stderr.
"""
import json
import os
import sys
import time


def main():
    payload = json.load(sys.stdin)
    if "hook" in payload:
        event = payload.get("event") or {}
        line = {"hook": payload["hook"], "phase": payload.get("phase"),
                "session": event.get("SessionID"), "turn": event.get("TurnIndex"),
                "messages": len(event.get("Messages") or [])}
    else:
        line = {"hook": "eval", "eval_id": payload.get("eval_id"),
                "type": payload.get("type"), "score": payload.get("score"),
                "skipped": payload.get("skipped", False)}
    line["ts"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    path = os.environ.get("AUDIT_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps(line, sort_keys=True) + "\n")
    else:
        sys.stderr.write(json.dumps(line, sort_keys=True) + "\n")
    print(json.dumps({"allow": True, "ack": True}))


if __name__ == "__main__":
    main()
