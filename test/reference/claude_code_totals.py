#!/usr/bin/env python3
"""Independent reference for the Claude Code reader's figures (a different method, a different
language): groups assistant lines by message.id with plain Python and prints the totals the
unit tests expect. Run: python3 test/reference/claude_code_totals.py FILE.jsonl"""
import json, statistics, sys

def totals(path):
    calls = {}  # message.id -> [first usage, max output]
    order = []
    for line in open(path, encoding='utf-8'):
        if not line.strip():
            continue
        d = json.loads(line)
        if d.get('type') != 'assistant':
            continue
        m = d['message']
        if m.get('model') == '<synthetic>':
            continue
        mid = m.get('id') or d.get('requestId')
        u = m.get('usage') or {}
        if mid not in calls:
            calls[mid] = [u, u.get('output_tokens', 0)]
            order.append(mid)
        else:
            calls[mid][1] = max(calls[mid][1], u.get('output_tokens', 0))
    rows = []
    for mid in order:
        u, out = calls[mid]
        cached = u['cache_read_input_tokens']
        appended = u['input_tokens'] + u['cache_creation_input_tokens']
        rows.append((cached, appended, u['cache_creation_input_tokens'], out))
    cached = sum(r[0] for r in rows); appended = sum(r[1] for r in rows)
    cw = sum(r[2] for r in rows); out = sum(r[3] for r in rows)
    per_call = [r[1] / r[3] for r in rows if r[3] > 0]
    return {
        'llmCalls': len(rows), 'input': cached + appended, 'cached': cached, 'appended': appended,
        'cacheWrite': cw, 'output': out, 'cacheHitRate': cached / (cached + appended),
        'rawInputToOutput': (cached + appended) / out, 'appendMean': statistics.mean(per_call),
        'appendMedian': statistics.median(per_call), 'appendAggregate': appended / out,
    }

if __name__ == '__main__':
    for path in sys.argv[1:]:
        print(path)
        for k, v in totals(path).items():
            print(f'  {k:18} {v}')
