#!/usr/bin/env python3
"""Checks a Weka trace file the way its consumers would load it, without their code.

The field sets, types and literals restate AIPerf's pydantic models by hand
(ai-dynamo/aiperf src/aiperf/dataset/loader/weka_trace_models.py: WekaTrace, WekaNormalRequest,
WekaStreamingRequest, WekaSubagentEntry; every model is extra="forbid", and a subagent's
requests may not hold markers). The block rule is the one every published kv-cache-tester trace
keeps (callanjfox/kv-cache-tester traces/): len(hash_ids) == floor(in / block_size). Prints one
line per problem and exits 1 if there is any.
Run: python3 test/reference/weka_schema.py TRACE.json [...]"""
import json, sys

TRACE = {'id': str, 'models': list, 'block_size': int, 'hash_id_scope': str, 'tool_tokens': int, 'system_tokens': int, 'requests': list, 'totals': (dict, type(None))}
TRACE_REQUIRED = {'id', 'models', 'block_size', 'hash_id_scope', 'requests'}
REQUEST = {'t': (int, float), 'type': str, 'model': str, 'in': int, 'out': int, 'hash_ids': list, 'input_types': list, 'output_types': list, 'stop': str, 'api_time': (int, float, type(None)), 'think_time': (int, float, type(None))}
REQUEST_REQUIRED = {'t', 'type', 'model', 'in', 'out'}
STREAMING = dict(REQUEST, ttft=(int, float, type(None)))
SUBAGENT = {'t': (int, float), 'type': str, 'agent_id': str, 'subagent_type': str, 'duration_ms': (int, type(None)), 'total_tokens': (int, type(None)), 'tool_use_count': (int, type(None)), 'status': str, 'requests': list, 'models': list, 'tool_tokens': int, 'system_tokens': int}
SUBAGENT_REQUIRED = {'t', 'type', 'agent_id', 'subagent_type', 'status', 'requests', 'models'}


def fields(where, obj, allowed, required, problems):
    for k in obj:
        if k not in allowed:
            problems.append(f'{where}: unknown field "{k}" (extra="forbid")')
    for k in required:
        if k not in obj:
            problems.append(f'{where}: missing "{k}"')
    for k, v in obj.items():
        if k in allowed and (isinstance(v, bool) or not isinstance(v, allowed[k])):
            problems.append(f'{where}: "{k}" has type {type(v).__name__}')


def request(where, r, block, problems, inner):
    kind = r.get('type')
    if kind == 'subagent':
        if inner:
            problems.append(f'{where}: a sub-agent inside a sub-agent')
            return
        fields(where, r, SUBAGENT, SUBAGENT_REQUIRED, problems)
        for j, x in enumerate(r.get('requests', [])):
            request(f'{where}.requests[{j}]', x, block, problems, True)
        return
    if kind not in ('n', 's'):
        problems.append(f'{where}: type {kind!r}')
        return
    fields(where, r, REQUEST if kind == 'n' else STREAMING, REQUEST_REQUIRED, problems)
    ids = r.get('hash_ids', [])
    if not all(isinstance(h, int) and not isinstance(h, bool) for h in ids):
        problems.append(f'{where}: hash_ids not all integers')
    if isinstance(r.get('in'), int) and len(ids) != r['in'] // block:
        problems.append(f'{where}: {len(ids)} hash_ids for in={r["in"]}, floor(in/{block}) = {r["in"] // block}')


def check(path):
    problems = []
    trace = json.load(open(path, encoding='utf-8'))
    fields('trace', trace, TRACE, TRACE_REQUIRED, problems)
    if trace.get('hash_id_scope') != 'local':
        problems.append('trace: hash_id_scope is not "local" (the only scope AIPerf accepts)')
    block = trace.get('block_size') or 64
    for i, r in enumerate(trace.get('requests', [])):
        request(f'requests[{i}]', r, block, problems, False)
    return problems


if __name__ == '__main__':
    found = [f'{p}: {msg}' for p in sys.argv[1:] for msg in check(p)]
    print('\n'.join(found) if found else 'ok')
    sys.exit(1 if found else 0)
