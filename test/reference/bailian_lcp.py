#!/usr/bin/env python3
"""Independent reference for the Bailian reader (a different method, a different language).

Rebuilds sessions by walking parent_chat_id up to the root with plain dicts, and computes each
request's cached tokens as the longest common prefix of its hash_ids with its PARENT's hash_ids,
times 16 tokens, capped at input_length. Roots start cold (cached 0); a child whose parent row is
missing starts its own session and its cached tokens are unknown (None).
Run: python3 test/reference/bailian_lcp.py FILE.jsonl"""
import json, math, sys

BLOCK = 16

def lcp(a, b):
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n

def analyse(path):
    rows = [json.loads(line) for line in open(path, encoding='utf-8') if line.strip()]
    by_id = {r['chat_id']: r for r in rows}
    out = []
    for r in rows:
        # the session root: climb while the parent row exists
        root = r
        while root['parent_chat_id'] != -1 and root['parent_chat_id'] in by_id:
            root = by_id[root['parent_chat_id']]
        parent = by_id.get(r['parent_chat_id'])
        if r['parent_chat_id'] == -1:
            cached = 0
        elif parent is None:
            cached = None
        else:
            cached = min(lcp(r['hash_ids'], parent['hash_ids']) * BLOCK, r['input_length'])
        out.append({
            'chat_id': r['chat_id'], 'session': root['chat_id'], 'turn': r['turn'],
            'blocks_ok': len(r['hash_ids']) == math.ceil(r['input_length'] / BLOCK),
            'input': r['input_length'], 'cached': cached,
            'appended': None if cached is None else r['input_length'] - cached,
            'output': r['output_length'], 'startMs': round(r['timestamp'] * 1000, 3),
        })
    return out

if __name__ == '__main__':
    for path in sys.argv[1:]:
        rows = analyse(path)
        sessions = {}
        for row in rows:
            sessions.setdefault(row['session'], []).append(row['chat_id'])
            print(row)
        print('sessions', {k: len(v) for k, v in sessions.items()})
        known = [r for r in rows if r['cached'] is not None]
        print('totals input', sum(r['input'] for r in rows), 'cached', sum(r['cached'] for r in known),
              'appended', sum(r['appended'] for r in known), 'output', sum(r['output'] for r in rows))
