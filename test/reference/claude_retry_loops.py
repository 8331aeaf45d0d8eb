#!/usr/bin/env python3
"""Independent reference for the retry-loop figures of the Claude Code fixtures: error
sizes read straight from the tool_result lines (ceil(chars / 4) tokens), call outputs
grouped by message.id, and later calls counted up to the compaction. Run:
  python3 test/reference/claude_retry_loops.py"""
import json, math

def load(path):
    calls, order, tool_call, results = {}, [], {}, {}
    compact_before = None
    for n, line in enumerate(open(path, encoding='utf-8'), 1):
        d = json.loads(line)
        if d.get('type') == 'system' and d.get('subtype') == 'compact_boundary':
            compact_before = len(order)
        if d.get('type') == 'assistant':
            m = d['message']
            if m['id'] not in calls:
                calls[m['id']] = 0
                order.append(m['id'])
            calls[m['id']] = max(calls[m['id']], m['usage']['output_tokens'])
            for b in m['content']:
                if b['type'] == 'tool_use':
                    tool_call[b['id']] = order.index(m['id'])
        if d.get('type') == 'user' and isinstance(d['message']['content'], list):
            for b in d['message']['content']:
                if b.get('type') == 'tool_result':
                    c = b.get('content')
                    text = c if isinstance(c, str) else '\n'.join(x.get('text', '') for x in c or [] if isinstance(x, dict) and 'text' in x)
                    results[n] = (b['tool_use_id'], len(text))
    return calls, order, tool_call, results, compact_before

def loop_figures(path, result_lines):
    calls, order, tool_call, results, compact = load(path)
    end = compact if compact is not None else len(order)
    wasted = carry = 0
    seen = set()
    for line in result_lines:
        tool_id, chars = results[line]
        idx = tool_call[tool_id]
        tokens = math.ceil(chars / 4)
        if idx not in seen:
            seen.add(idx)
            wasted += calls[order[idx]]
        wasted += tokens
        later = (end if idx < end else len(order)) - idx - 1
        carry += tokens * later
        print(f'  line {line}: call {idx}, output {calls[order[idx]]}, error {chars} chars = {tokens} tokens, read by {later} later calls')
    print(f'  wasted {wasted}, carried forward {carry}')

print('spotter: Bash git commit loop')
loop_figures('test/fixtures/claude-code/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl', [1209, 1343, 1366, 1389, 1419, 1447, 1463])
print('M-Claude: Edit/Write loop on sync_raw_logs.py')
loop_figures('test/fixtures/claude-code/edit-retry-loop.jsonl', [61, 65, 70, 74])
