#!/usr/bin/env python3
"""Independent reference for the OpenCode reader on an `opencode export` file: LLM calls
(step-finish parts, or an assistant message without steps), Σinput (input + cache.read +
cache.write), Σcached (cache.read), Σoutput (output + reasoning), tool parts, failed tool
parts (status "error" or metadata.exit != 0), typed prompts (user messages with a text part
not marked synthetic), aborted responses; and, when the export carries the session's own
totals (`info.tokens`), how far they exceed the sums over the calls (input, cached, output:
the unattributed tokens, issue 25). `--drop-last-assistant` first removes the export's last
assistant message, as the unit test does in memory to get an export whose totals exceed its
messages'. Run:
  python3 test/reference/opencode_export.py session.json [--drop-last-assistant]"""
import json, sys

d = json.load(open(sys.argv[1], encoding='utf-8'))
if '--drop-last-assistant' in sys.argv[2:]:
    last = max(i for i, m in enumerate(d['messages']) if m['info']['role'] == 'assistant')
    del d['messages'][last]
calls = inp = cached = out = tools = failed = typed = aborted = 0
def add(t):
    global calls, inp, cached, out
    c = t.get('cache') or {}
    calls += 1
    inp += t.get('input', 0) + c.get('read', 0) + c.get('write', 0)
    cached += c.get('read', 0)
    out += t.get('output', 0) + t.get('reasoning', 0)
for m in d['messages']:
    info, parts = m['info'], m['parts']
    if info['role'] == 'user':
        typed += any(p['type'] == 'text' and not p.get('synthetic') for p in parts)
        continue
    if (info.get('error') or {}).get('name') == 'MessageAbortedError':
        aborted += 1
    steps = [p for p in parts if p['type'] == 'step-finish']
    for p in steps:
        add(p.get('tokens') or {})
    if not steps and not info.get('error'):
        add(info.get('tokens') or {})
    for p in parts:
        if p['type'] != 'tool':
            continue
        tools += 1
        st = p['state']
        ex = (st.get('metadata') or {}).get('exit')
        failed += st['status'] == 'error' or (st['status'] == 'completed' and isinstance(ex, int) and ex != 0)
print('calls', calls, 'input', inp, 'cached', cached, 'output', out, 'tools', tools, 'failed', failed, 'typed', typed, 'aborted', aborted)
t = d['info'].get('tokens')
if t:
    c = t.get('cache') or {}
    totals = (t.get('input', 0) + c.get('read', 0) + c.get('write', 0), c.get('read', 0), t.get('output', 0) + t.get('reasoning', 0))
    print('unattributed input', max(0, totals[0] - inp), 'cached', max(0, totals[1] - cached), 'output', max(0, totals[2] - out))
