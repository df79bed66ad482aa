#!/usr/bin/env python3
"""Exec hook: deny provider calls that carry a US Social Security number.

Reads PromptKit's exec-hook request on stdin (provider before_call or
after_call) and prints a verdict on stdout. The payload keys are PromptKit's
Go field names (ProviderID, Messages, SystemPrompt, ...); messages use
lowercase keys (role, content, parts, tool_result).
"""
import json
import re
import sys

SSN = re.compile(r"\b(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}\b")


def message_texts(msg):
    if not msg:
        return
    if msg.get("content"):
        yield msg["content"]
    for part in msg.get("parts") or []:
        if part.get("type") == "text" and part.get("text"):
            yield part["text"]
    result = msg.get("tool_result") or {}
    for part in result.get("parts") or []:
        if part.get("type") == "text" and part.get("text"):
            yield part["text"]


def texts(envelope):
    request = envelope.get("request") or {}
    if request.get("SystemPrompt"):
        yield "system prompt", request["SystemPrompt"]
    for i, msg in enumerate(request.get("Messages") or []):
        for text in message_texts(msg):
            yield "message %d (%s)" % (i, msg.get("role", "?")), text
    response = envelope.get("response") or {}
    for text in message_texts(response.get("Message")):
        yield "response", text


def main():
    envelope = json.load(sys.stdin)
    for where, text in texts(envelope):
        if SSN.search(text):
            print(json.dumps({
                "allow": False,
                "reason": "US SSN found in %s" % where,
                "metadata": {"detector": "ssn", "phase": envelope.get("phase")},
            }))
            return
    print(json.dumps({"allow": True}))


if __name__ == "__main__":
    main()
