#!/usr/bin/env python3
"""A Claude Code log's call transcripts, independently of the TypeScript readers.

For the main thread of one log (records without isSidechain), groups assistant records
by message.id into calls (in order of first appearance) and prints, as JSON, for the
call asked (1-based): the typed prompt that opened its turn (when it is the turn's first
call), its text, thinking and tool_use blocks (tool input as JSON), and the tool_result
blocks answering its tool_use ids. Usage: claude_transcript.py LOG CALL
"""
import json
import sys


def main(path: str, wanted: int) -> None:
    records = [json.loads(line) for line in open(path, encoding="utf-8") if line.strip()]
    calls: list[str] = []
    blocks: dict[str, list] = {}
    prompt_before: dict[str, str | None] = {}
    last_prompt = None
    for r in records:
        if r.get("isSidechain"):
            continue
        m = r.get("message")
        if not isinstance(m, dict):
            continue
        if r.get("type") == "user" and isinstance(m.get("content"), str) and not r.get("isMeta") and not r.get("isCompactSummary"):
            last_prompt = m["content"]
        if r.get("type") == "assistant":
            mid = m.get("id")
            if mid not in blocks:
                calls.append(mid)
                blocks[mid] = []
                prompt_before[mid] = last_prompt
                last_prompt = None
            for b in m.get("content") or []:
                blocks[mid].append(b)
    mid = calls[wanted - 1]
    out = {"prompt": prompt_before[mid], "text": [], "thinking": [], "tools": [], "results": []}
    ids = set()
    for b in blocks[mid]:
        if b.get("type") == "text":
            out["text"].append(b["text"])
        elif b.get("type") == "thinking":
            out["thinking"].append(b["thinking"])
        elif b.get("type") == "tool_use":
            out["tools"].append({"name": b["name"], "input": b["input"]})
            ids.add(b["id"])
    for r in records:
        m = r.get("message")
        if r.get("type") != "user" or not isinstance(m, dict) or not isinstance(m.get("content"), list):
            continue
        for b in m["content"]:
            if b.get("type") == "tool_result" and b.get("tool_use_id") in ids:
                c = b.get("content")
                text = c if isinstance(c, str) else "\n".join(x.get("text", "") for x in c or [] if isinstance(x, dict) and x.get("type") == "text")
                out["results"].append({"error": b.get("is_error") is True, "text": text})
    print(json.dumps(out, ensure_ascii=False, indent=1))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
