#!/usr/bin/env python3
"""Independent reference for the Mooncake reader (a different method, a different language).

Replays the requests in file order against an ideal, infinite prefix cache kept as a Python
dict of block-hash prefixes (tuples), not as a set of single ids: a request hits the longest
prefix of its hash_ids that some earlier request also had as a prefix. cached = hit blocks x 512,
capped at input_length (a hit on the last, partial block counts only its real tokens).
Run: python3 test/reference/mooncake_cache.py FILE.jsonl [FIRST_N_ROWS]"""
import json, math, sys

BLOCK = 512

def analyse(path, limit=None):
    prefixes = set()
    rows = []
    for line in open(path, encoding='utf-8'):
        if not line.strip():
            continue
        if limit is not None and len(rows) >= limit:
            break
        r = json.loads(line)
        h = tuple(r['hash_ids'])
        hit = 0
        for k in range(len(h), 0, -1):  # longest first
            if h[:k] in prefixes:
                hit = k
                break
        for k in range(1, len(h) + 1):
            prefixes.add(h[:k])
        cached = min(hit * BLOCK, r['input_length'])
        rows.append({'input': r['input_length'], 'cached': cached, 'appended': r['input_length'] - cached,
                     'output': r['output_length'], 'start': r['timestamp'],
                     'blocks_ok': len(h) == math.ceil(r['input_length'] / BLOCK),
                     'full_hit': hit == len(h) and len(h) > 0})
    return rows

if __name__ == '__main__':
    path = sys.argv[1]
    limit = int(sys.argv[2]) if len(sys.argv) > 2 else None
    rows = analyse(path, limit)
    print('rows', len(rows), 'block-count mismatches', sum(not r['blocks_ok'] for r in rows))
    for key in ('input', 'cached', 'appended', 'output'):
        print(f'  {key:9}', sum(r[key] for r in rows))
    print('  hit rate ', sum(r['cached'] for r in rows) / sum(r['input'] for r in rows))
    print('  fully cached requests', sum(r['full_hit'] for r in rows), 'of which cached == input',
          sum(r['full_hit'] and r['cached'] == r['input'] for r in rows))
    print('  first/last start', rows[0]['start'], rows[-1]['start'])
    for i in (0, 1, 4, 261):
        if i < len(rows):
            print('  row', i + 1, rows[i])
