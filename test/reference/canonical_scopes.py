#!/usr/bin/env python3
"""Independent reference for the figures a canonical Agent Trace file gives per scope: each
session (its role, LLM calls, typed turns, cached and input tokens, failed tool calls) and the
whole file (every session summed, the hit rate token-weighted). Plain Python over the raw
records (docs/trace-format.md), a different method from the TypeScript reader and analyses: the
tests of the Analyze Agent Session notification and of the CodeLens summary take their figures
from here. Run: python3 test/reference/canonical_scopes.py FILE.trace.jsonl"""
import json, sys


def scopes(path):
    sessions = {}  # id -> figures, in file order
    for line in open(path, encoding='utf-8'):
        if not line.strip():
            continue
        r = json.loads(line)
        t = r.get('type')
        if t == 'session':
            sessions[r['id']] = {'role': r.get('role', 'main'), 'calls': 0, 'turns': 0, 'cached': 0, 'input': 0, 'failed': 0}
        elif t == 'llm_call':
            s = sessions[r['session']]
            s['calls'] += 1
            tok = r.get('tokens') or {}
            if tok.get('cached') is not None and tok.get('input') is not None:
                s['cached'] += tok['cached']
                s['input'] += tok['input']
        elif t == 'turn':
            sessions[r['session']]['turns'] += 1
        elif t == 'tool_call' and r.get('isError') is True:
            sessions[r['session']]['failed'] += 1
    whole = {
        'sessions': len(sessions),
        'main': sum(1 for s in sessions.values() if s['role'] == 'main'),
        'subAgents': sum(1 for s in sessions.values() if s['role'] != 'main'),
        'calls': sum(s['calls'] for s in sessions.values()),
        'failed': sum(s['failed'] for s in sessions.values()),
    }
    cached = sum(s['cached'] for s in sessions.values())
    inp = sum(s['input'] for s in sessions.values())
    whole['hitRate'] = cached / inp if inp else None
    for s in sessions.values():
        s['hitRate'] = s['cached'] / s['input'] if s['input'] else None
    return sessions, whole


if __name__ == '__main__':
    for path in sys.argv[1:]:
        sessions, whole = scopes(path)
        print(path)
        for sid, s in sessions.items():
            print(f"  {s['role']:10} {sid}: calls {s['calls']}, turns {s['turns']}, failed {s['failed']}, hit {s['hitRate']:.4%}")
        print(f"  whole: {whole['sessions']} sessions ({whole['main']} main, {whole['subAgents']} sub-agents), calls {whole['calls']}, failed {whole['failed']}, hit {whole['hitRate']:.4%}")
