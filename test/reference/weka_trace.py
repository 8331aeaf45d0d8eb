#!/usr/bin/env python3
"""Independent reference for the Weka (kv-cache-tester) reader: a different method, a different language.

Times follow kv-cache-tester's own flatten_requests (trace_replay_tester.py): a sub-agent's inner
requests are at spawn t + their own t. Every API call of the trace is replayed in that time order
(ties in file order) against an ideal, infinite prefix cache kept as a set of hash-id prefixes
(tuples), not of single ids: a call hits the longest prefix of its hash_ids some earlier call also
had. cached = hit blocks x block_size. A turn is a call whose input_types hold "text" and not
"tool_result". Prints one JSON object per session: calls, turns, input, cached, output, the
first call's start and the last call's end (ms).
Run: python3 test/reference/weka_trace.py TRACE.json"""
import json, sys


def flatten(requests, base, session, out, sessions, trace_id):
    for i, r in enumerate(requests):
        if r.get('type') == 'subagent':
            sid = f"{trace_id}/{r['agent_id']}"
            sessions.append(sid)
            flatten(r.get('requests', []), base + r['t'], sid, out, sessions, trace_id)
        else:
            out.append((base + r['t'], len(out), session, r))


def analyse(path):
    trace = json.load(open(path, encoding='utf-8'))
    block = trace['block_size']
    calls, sessions = [], [trace['id']]
    # The parent's own requests are at root time (base 0).
    flatten(trace['requests'], 0.0, trace['id'], calls, sessions, trace['id'])
    prefixes = set()
    per = {s: {'calls': 0, 'turns': 0, 'input': 0, 'cached': 0, 'output': 0, 'firstStartMs': None, 'lastEndMs': None} for s in sessions}
    for t, _, sid, r in sorted(calls, key=lambda c: (c[0], c[1])):
        h = tuple(r['hash_ids'])
        hit = 0
        for k in range(len(h), 0, -1):
            if h[:k] in prefixes:
                hit = k
                break
        for k in range(1, len(h) + 1):
            prefixes.add(h[:k])
        s = per[sid]
        s['calls'] += 1
        types = r.get('input_types', [])
        if 'text' in types and 'tool_result' not in types:
            s['turns'] += 1
        s['input'] += r['in']
        s['cached'] += min(hit * block, r['in'])
        s['output'] += r['out']
        start = round(t * 1000, 3)
        if s['firstStartMs'] is None or start < s['firstStartMs']:
            s['firstStartMs'] = start
        if 'api_time' in r:
            end = round((t + r['api_time']) * 1000, 3)
            if s['lastEndMs'] is None or end > s['lastEndMs']:
                s['lastEndMs'] = end
    return per


if __name__ == '__main__':
    for sid, s in analyse(sys.argv[1]).items():
        print(json.dumps({'session': sid, **s}))
