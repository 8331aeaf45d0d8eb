#!/usr/bin/env python3
"""Independent reference for the Codex reader's token figures (a different method, a different
language): instead of reading each call's `last_token_usage`, it differences the cumulative
`total_token_usage` of consecutive `event_msg/token_count` lines. A zero difference is a repeated
report (Codex 0.60 writes each one twice), `info: null` carries nothing. Each non-zero difference
is one LLM call. It also checks that every call's `last_token_usage` equals its difference.
Run: python3 test/reference/codex_deltas.py FILE.jsonl [FILE.jsonl ...]"""
import json, statistics, sys

FIELDS = ('input_tokens', 'cached_input_tokens', 'output_tokens', 'reasoning_output_tokens', 'total_tokens')

def calls(path):
    prev = dict.fromkeys(FIELDS, 0)
    rows = []  # (1-based line, delta dict, last_token_usage)
    for n, line in enumerate(open(path, encoding='utf-8'), 1):
        if not line.strip():
            continue
        d = json.loads(line)
        p = d.get('payload') or {}
        if d.get('type') != 'event_msg' or p.get('type') != 'token_count' or not p.get('info'):
            continue
        total = p['info']['total_token_usage']
        delta = {k: total.get(k, 0) - prev[k] for k in FIELDS}
        prev = {k: total.get(k, 0) for k in FIELDS}
        if all(v == 0 for v in delta.values()):
            continue
        rows.append((n, delta, p['info'].get('last_token_usage')))
    return rows

def report(path):
    rows = calls(path)
    mismatches = [n for n, delta, last in rows if last is None or any(last.get(k, 0) != delta[k] for k in FIELDS)]
    inp = sum(r[1]['input_tokens'] for r in rows)
    cached = sum(r[1]['cached_input_tokens'] for r in rows)
    out = sum(r[1]['output_tokens'] for r in rows)
    reasoning = sum(r[1]['reasoning_output_tokens'] for r in rows)
    appended = inp - cached
    per_call = [(r[1]['input_tokens'] - r[1]['cached_input_tokens']) / r[1]['output_tokens'] for r in rows if r[1]['output_tokens'] > 0]
    print(path)
    print(f'  llmCalls           {len(rows)}')
    print(f'  first calls        {[(n, d["input_tokens"], d["cached_input_tokens"], d["output_tokens"], d["reasoning_output_tokens"]) for n, d, _ in rows[:3]]}')
    print(f'  last call          {[(n, d["input_tokens"], d["cached_input_tokens"], d["output_tokens"], d["reasoning_output_tokens"]) for n, d, _ in rows[-1:]]}')
    print(f'  last != delta      {mismatches}')
    print(f'  input              {inp}')
    print(f'  cached             {cached}')
    print(f'  appended           {appended}')
    print(f'  output             {out}')
    print(f'  reasoningOutput    {reasoning}')
    print(f'  cacheHitRate       {cached / inp if inp else None}')
    print(f'  rawInputToOutput   {inp / out if out else None}')
    print(f'  appendMean         {statistics.mean(per_call) if per_call else None}')
    print(f'  appendMedian       {statistics.median(per_call) if per_call else None}')
    print(f'  appendAggregate    {appended / out if out else None}')

if __name__ == '__main__':
    for path in sys.argv[1:]:
        report(path)
