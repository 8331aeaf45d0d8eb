#!/usr/bin/env python3
"""Independent reference for the AIPerf reader: per conversation_id, the number of
requests, Σinput_sequence_length, Σoutput_sequence_length, Σreasoning tokens, failed
requests, and the mean TTFT and request latency (ms). Run:
  python3 test/reference/aiperf_export.py profile_export.jsonl"""
import json, sys
from collections import OrderedDict

rows = OrderedDict()
for line in open(sys.argv[1], encoding='utf-8'):
    r = json.loads(line)
    m = {k: (v['value'] if isinstance(v, dict) else v) for k, v in r['metrics'].items()}
    conv = r['metadata'].get('conversation_id') or 'aiperf-requests'
    s = rows.setdefault(conv, {'requests': 0, 'input': 0, 'output': 0, 'reasoning': 0, 'failed': 0, 'ttft': [], 'latency': []})
    s['requests'] += 1
    if r.get('error'):
        s['failed'] += 1
        continue
    s['input'] += m.get('input_sequence_length', 0)
    s['output'] += m.get('output_sequence_length', 0)
    s['reasoning'] += m.get('reasoning_token_count', 0)
    s['ttft'].append(m.get('time_to_first_token', m.get('ttft')))
    s['latency'].append(m.get('request_latency'))
for conv, s in rows.items():
    ttft = sum(s['ttft']) / len(s['ttft']) if s['ttft'] else None
    lat = sum(s['latency']) / len(s['latency']) if s['latency'] else None
    print(conv, s['requests'], s['input'], s['output'], s['reasoning'], s['failed'], ttft, lat)
