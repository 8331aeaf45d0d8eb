#!/usr/bin/env python3
"""Independent reference for Codex commands whose outcome only exec_command_end reports
(issue 25): counts the failed tool calls of a rollout the way a reader of the raw records
would, output first and exec_command_end only where no output record exists.

- a function_call / custom_tool_call whose output says `Exit code: N` with N != 0, or
  `apply_patch verification failed`, failed;
- a call with no output record at all (the file ends first) failed when its
  exec_command_end says `exit_code` != 0 or `status: failed`.
Prints the failed calls of each kind and those left without any outcome. Run:
  python3 test/reference/codex_exec_end.py rollout.jsonl"""
import json, re, sys

records = [json.loads(l) for l in open(sys.argv[1], encoding='utf-8') if l.strip()]
calls, outputs, ends = [], {}, {}
for r in records:
    p = r.get('payload') or {}
    if r.get('type') == 'response_item' and p.get('type') in ('function_call', 'custom_tool_call'):
        calls.append(p.get('call_id'))
    elif r.get('type') == 'response_item' and p.get('type') in ('function_call_output', 'custom_tool_call_output'):
        o = p.get('output')
        outputs[p.get('call_id')] = o if isinstance(o, str) else json.dumps(o)
    elif r.get('type') == 'event_msg' and p.get('type') == 'exec_command_end':
        ends[p.get('call_id')] = p

failed_by_output = failed_by_end = ended_ok = no_outcome = 0
for cid in calls:
    if cid in outputs:
        text = outputs[cid]
        m = re.match(r'Exit code: (\d+)', text)
        if (m and int(m.group(1)) != 0) or text.startswith('apply_patch verification failed'):
            failed_by_output += 1
    elif cid in ends:
        e = ends[cid]
        if e.get('exit_code') not in (0, None) or e.get('status') == 'failed':
            failed_by_end += 1
        else:
            ended_ok += 1
    else:
        no_outcome += 1
print(f'calls {len(calls)} failed_by_output {failed_by_output} failed_by_end {failed_by_end} ended_ok_without_output {ended_ok} no_outcome {no_outcome}')
