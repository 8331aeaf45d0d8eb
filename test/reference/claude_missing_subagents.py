#!/usr/bin/env python3
"""Independent reference for Claude Code sub-agents whose transcript is missing (issue 25):
lists every readable user line whose toolUseResult names an agentId (a Task result), and
says whether that agent's transcript is beside the session: <session>/subagents/agent-<id>.jsonl
(2.1.x) or a sibling agent-<id>.jsonl in the same folder (2.0.x). Lines that are not valid
JSON are skipped, as the reader skips them. Run:
  python3 test/reference/claude_missing_subagents.py SESSION.jsonl"""
import json, os, sys

path = sys.argv[1]
folder, name = os.path.split(path)
stem = name[:-len('.jsonl')]
seen = {}
for n, line in enumerate(open(path, encoding='utf-8'), 1):
    try:
        r = json.loads(line)
    except json.JSONDecodeError:
        continue
    result = r.get('toolUseResult') if isinstance(r, dict) else None
    agent = result.get('agentId') if isinstance(result, dict) else None
    if r.get('type') == 'user' and isinstance(agent, str) and agent not in seen:
        seen[agent] = n
for agent, n in seen.items():
    beside = os.path.exists(os.path.join(folder, stem, 'subagents', f'agent-{agent}.jsonl')) or os.path.exists(os.path.join(folder, f'agent-{agent}.jsonl'))
    print(f'line {n} agent {agent} {"present" if beside else "MISSING"}')
