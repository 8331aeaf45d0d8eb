#!/usr/bin/env python3
"""Independent reference for the OpenHands reader on an evaluation output.jsonl: per
instance, the LLM calls (distinct tool_call_metadata.model_response.id of agent actions),
their Σprompt / Σcompletion tokens (model_response.usage, else metrics.token_usages by
response_id), the tool calls (distinct tool_call_id per response), and the failed ones: an
observation for the action (`cause`) that is `error`, has exit_code != 0, or starts with
"ERROR:"; plus `error` observations that answer no action (a rejected call). An agent
`message` action with no model response id is a reply in text: a call of its own, tokens
unknown (issue 25; counted in the calls, not in the token sums). A saved trajectory (a JSON
array of events) is read as one instance. Run:
  python3 test/reference/openhands_events.py output.jsonl | trajectory.json"""
import json, sys

def instance(inst):
    usages = {u.get('response_id'): u for u in (inst.get('metrics') or {}).get('token_usages') or []}
    calls, tools, action_tool = {}, set(), {}
    failed = 0
    for e in inst['history']:
        rid = ((e.get('tool_call_metadata') or {}).get('model_response') or {}).get('id')
        if e.get('source') == 'agent' and e.get('action') == 'message' and not rid and not e.get('llm_metrics'):
            calls[('reply', e['id'])] = (0, 0)  # a reply in text: a call, usage unknown
            continue
        if e.get('source') == 'agent' and 'action' in e and e.get('tool_call_metadata'):
            t = e['tool_call_metadata']
            mr = t.get('model_response') or {}
            rid = mr.get('id')
            if rid and rid not in calls:
                u = mr.get('usage') or usages.get(rid) or {}
                calls[rid] = (u.get('prompt_tokens') or 0, u.get('completion_tokens') or 0)
            key = (rid, t.get('tool_call_id'))
            if key not in tools:
                tools.add(key)
                action_tool[e['id']] = key
        elif 'observation' in e:
            text = e.get('content') or e.get('message') or ''
            exit_code = ((e.get('extras') or {}).get('metadata') or {}).get('exit_code')
            running = e['observation'] == 'run' and exit_code == -1  # still running when OpenHands stopped waiting
            bad = not running and (e['observation'] == 'error' or (isinstance(exit_code, int) and exit_code > 0) or e.get('success') is False or text.lstrip().startswith('ERROR:'))
            if e.get('cause') in action_tool:
                failed += bad
            elif e['observation'] == 'error':
                failed += 1
    return len(calls), sum(c[0] for c in calls.values()), sum(c[1] for c in calls.values()), len(tools), failed

text = open(sys.argv[1], encoding='utf-8').read()
if text.lstrip().startswith('['):
    print('trajectory', *instance({'history': json.loads(text)}))
else:
    for line in text.splitlines():
        if line.strip():
            inst = json.loads(line)
            print(inst.get('instance_id'), *instance(inst))
