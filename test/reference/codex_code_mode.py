#!/usr/bin/env python3
"""Independent reference for Codex code mode (CLI 0.14x and later): the tool calls of a rollout
and which of them failed, worked out without the reader's code (a different language, and rules
written from the rollout itself rather than from the reader).

A tool call is a `response_item` of type function_call, custom_tool_call or local_shell_call (one
per `call_id`). Its output is the `*_call_output` with the same `call_id`; `output` is a string or a
list of `{type: input_text, text}` items (their texts joined with newlines).

Code mode runs tools inside a script: `exec` (custom tool, JavaScript) and `wait` (function, resumes a
running cell). The result's first line is `Script completed|failed|terminated [with cell ID N]` or
`Script running with cell ID N`. The nested work a script did is what Codex logs between the call and
its output: `event_msg/item_completed` CommandExecution items (exit_code), `event_msg/patch_apply_end`
(success), `event_msg/web_search_end` with an `exec-…` call id. A script call failed when:
  - its header says failed or terminated, or
  - a nested command logged between the call and its output exited non-zero, or
  - a nested patch_apply_end says success false, or
  - a JSON line of the result printed by the script (`{"exit_code": N, …}`) has N != 0, or
  - its output is no script result at all (the runtime's own message, e.g. "aborted by user after 77.1s").
A `wait` belongs to the cell it names (`cell_id`), whose `exec` printed "Script running with cell ID N".
Any other tool failed when its shell runner header gives a non-zero exit code (`Exit code: N`,
`Process exited with code N`), or when its output is plain text that is neither JSON nor such a header
(Codex's own error message, e.g. "request_user_input is unavailable in Default mode").
The target of a failed apply_patch is the path in "Failed to find expected lines in <path>:".

Typed prompts: `event_msg/user_message` lines; files without them (0.15x) have `item_completed`
UserMessage items instead.

Run: python3 test/reference/codex_code_mode.py FILE.jsonl"""
import json, re, sys
from collections import Counter

SCRIPT_HEAD = re.compile(r'^Script (completed|failed|terminated|running)(?: with cell ID (\S+))?(?: after explicit yield)?\s*$')
RUNNER_HEAD = re.compile(r'^(?:Exit code: |Chunk ID: |Wall time: |Process exited with code |Process running with session ID )')


def text_of(output):
    if isinstance(output, str):
        return output
    if isinstance(output, dict):
        return text_of(output.get('content'))
    if isinstance(output, list):
        return '\n'.join(i.get('text', '') for i in output if isinstance(i, dict) and isinstance(i.get('text'), str))
    return ''


def main(path):
    records = [(n, json.loads(line)) for n, line in enumerate(open(path, encoding='utf-8'), 1) if line.strip()]
    calls = {}  # call_id -> dict
    order = []
    outputs = {}  # call_id -> (line, text)
    nested_since = {}  # call_id -> list of (line, kind, detail)
    open_script = None  # call_id of the exec/wait whose output has not come yet
    prompts_event, prompts_item = [], []
    nested_kinds = Counter()
    # Built-in searches outside code mode: a web_search_end (id ws_…) and its web_search_call item
    # (0.128 writes the item after the event, without an id) are one search.
    searches, search_ids = [], set()
    for n, r in records:
        p = r.get('payload') or {}
        t, pt = r.get('type'), p.get('type')
        if t == 'response_item' and pt in ('function_call', 'custom_tool_call', 'local_shell_call'):
            cid = p.get('call_id') or p.get('id')
            calls[cid] = {'line': n, 'name': p.get('name') or 'local_shell', 'args': p.get('arguments'), 'input': p.get('input')}
            order.append(cid)
            if p.get('name') in ('exec', 'wait'):
                open_script = cid
                nested_since[cid] = []
        elif t == 'response_item' and pt in ('function_call_output', 'custom_tool_call_output'):
            cid = p.get('call_id')
            if cid in calls and cid not in outputs:
                outputs[cid] = (n, text_of(p.get('output')))
            if cid == open_script:
                open_script = None
        elif t == 'event_msg' and pt == 'user_message':
            prompts_event.append(n)
        elif t == 'event_msg' and pt == 'item_completed':
            item = p.get('item') or {}
            if item.get('type') == 'UserMessage':
                prompts_item.append(n)
            elif item.get('type') == 'CommandExecution':
                nested_kinds['CommandExecution'] += 1
                if open_script:
                    nested_since[open_script].append((n, 'command', item.get('exit_code'), item.get('command')))
            elif item.get('type') == 'FileChange':
                nested_kinds['FileChange'] += 1
                if open_script:
                    nested_since[open_script].append((n, 'file', item.get('status') != 'failed', list((item.get('changes') or {}).keys())))
            else:
                nested_kinds['item_completed:' + str(item.get('type'))] += 1
        elif t == 'event_msg' and pt == 'patch_apply_end':
            nested_kinds['patch_apply_end'] += 1
            if open_script and str(p.get('call_id', '')).startswith('exec-'):
                nested_since[open_script].append((n, 'patch', p.get('success'), list((p.get('changes') or {}).keys())))
        elif t == 'event_msg' and pt == 'web_search_end':
            nested_kinds['web_search_end'] += 1
            cid = str(p.get('call_id', ''))
            if cid.startswith('exec-'):
                if open_script:
                    nested_since[open_script].append((n, 'search', None, p.get('query')))
            elif cid not in search_ids:
                search_ids.add(cid)
                searches.append((n, 'web_search_end', p.get('action')))
        elif t == 'response_item' and pt == 'web_search_call':
            cid = p.get('id') or p.get('call_id')
            same = searches and searches[-1][1] == 'web_search_end' and searches[-1][2] == p.get('action') and cid is None
            if cid is not None and cid in search_ids or same:
                searches[-1] = (searches[-1][0], 'paired with item on line %d' % n, searches[-1][2]) if same else searches[-1]
            else:
                search_ids.add(cid)
                searches.append((n, 'web_search_call', p.get('action')))

    running = {}  # cell id -> exec call id
    failures = []
    unfinished = []
    for cid in order:
        c = calls[cid]
        out = outputs.get(cid)
        if out is None:
            unfinished.append(c['line'])
            continue
        out_line, text = out
        first = text.split('\n', 1)[0]
        reason = None
        if c['name'] in ('exec', 'wait'):
            m = SCRIPT_HEAD.match(first)
            if not m:
                reason = 'no script result: ' + first
            elif m.group(1) == 'running':
                running[m.group(2)] = cid
                continue
            elif m.group(1) in ('failed', 'terminated'):
                reason = 'script ' + m.group(1)
            for (_, kind, value, detail) in nested_since.get(cid, []):
                if reason is None and kind == 'command' and value not in (None, 0):
                    reason = f'nested command {detail!r} exit {value}'
                if reason is None and kind == 'patch' and value is False:
                    reason = f'nested patch failed {detail}'
            if reason is None:
                for line in text.split('\n'):
                    s = line.strip()
                    if s.startswith('{') and '"exit_code"' in s:
                        try:
                            code = json.loads(s).get('exit_code')
                        except ValueError:
                            continue
                        if isinstance(code, int) and code != 0:
                            reason = f'printed exit_code {code}'
                            break
        else:
            is_json = True
            try:
                json.loads(text)
            except ValueError:
                is_json = False
            exit_code = re.search(r'^(?:Exit code:|Process exited with code) (-?\d+)\s*$', text.split('\nOutput:', 1)[0], re.M)
            if exit_code and int(exit_code.group(1)) != 0:
                reason = 'exit code ' + exit_code.group(1)
            elif not is_json and not RUNNER_HEAD.match(text) and text.strip():
                reason = 'plain message: ' + first
        if reason:
            m = re.search(r'Failed to find expected lines in (.+?):(?:\n|\s|$)', text)
            failures.append((c['line'], out_line, c['name'], reason[:120], m.group(1) if m else None))

    waits = []
    for cid in order:
        c = calls[cid]
        if c['name'] == 'wait':
            try:
                cell = str(json.loads(c['args'] or '{}').get('cell_id'))
            except ValueError:
                cell = None
            waits.append((c['line'], cell, calls[running[cell]]['line'] if cell in running else None))

    print(path)
    print(f'  tool calls         {len(order)}  {dict(Counter(calls[c]["name"] for c in order))}')
    print(f'  without output     {unfinished}')
    print(f'  running cells      {sorted((calls[v]["line"], k) for k, v in running.items())}')
    print(f'  waits (line, cell, exec line)  {waits}')
    print(f'  nested records     {dict(nested_kinds)}')
    print(f'  built-in searches  {[(n, how) for n, how, _ in searches]}')
    print(f'  failed calls       {len(failures)}')
    for f in failures:
        print(f'    call line {f[0]}, output line {f[1]}, {f[2]}: {f[3]!r}  target {f[4]}')
    print(f'  typed prompts      user_message lines {prompts_event}; item_completed UserMessage lines {prompts_item}')


if __name__ == '__main__':
    for path in sys.argv[1:]:
        main(path)
