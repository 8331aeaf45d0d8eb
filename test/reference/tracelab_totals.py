#!/usr/bin/env python3
"""Independent reference for the TraceLab round-trace reader (a different method, a different
language): groups rows by session_id with plain Python, orders them by round_index and prints
per-session call counts, token totals, turns, tool counts and tool durations.

Tool duration follows TraceLab's own "effective tool latency" (artifacts/tool_calls/
tool_latency_distribution/README.md): tool_internal_latency_ms if present, else
tool_wall_latency_ms. Call times: first timing event -> usage_report (else the last event).
Run: python3 test/reference/tracelab_totals.py FILE.jsonl"""
import json, sys
from datetime import datetime

def ms(ts):
    return datetime.fromisoformat(ts.replace('Z', '+00:00')).timestamp() * 1000

def analyse(path):
    sessions = {}
    for line in open(path, encoding='utf-8'):
        if line.strip():
            row = json.loads(line)
            sessions.setdefault(row['session_id'], []).append(row)
    report = {}
    for sid, rows in sessions.items():
        rows.sort(key=lambda r: r['round_index'])
        tools = [t for r in rows for t in r['tools']]
        identity_breaks = [r['round_index'] for r in rows
                           if r['input_tokens_total'] != r['prefix_tokens'] + r['newly_append_tokens']]
        turns = sum(1 for r in rows if r['first_input_event_type'] == 'user_message')
        times = []
        for r in rows:
            ev = r['timing_events']
            usage = [e for e in ev if e['event_type'] == 'usage_report']
            times.append((ms(ev[0]['timestamp']), ms((usage[-1] if usage else ev[-1])['timestamp'])))
        cw = [r['claude_cache_creation_input_tokens'] for r in rows if r['claude_cache_creation_input_tokens'] is not None]
        report[sid] = {
            'provider': rows[0]['provider'], 'calls': len(rows), 'turns': turns,
            'input': sum(r['input_tokens_total'] for r in rows),
            'cached': sum(r['prefix_tokens'] for r in rows),
            'appended': sum(r['newly_append_tokens'] for r in rows),
            'cacheWrite': sum(cw) if cw else None,
            'output': sum(r['output_tokens'] for r in rows),
            'reasoning': sum(r['reasoning_output_tokens'] or 0 for r in rows),
            'identity_breaks': identity_breaks,
            'tools': len(tools),
            'failed_tools': sum(1 for t in tools if t['is_error'] is True),
            'unknown_outcome_tools': sum(1 for t in tools if t['is_error'] is None),
            'tool_duration_ms': sum(t['tool_internal_latency_ms'] if t['tool_internal_latency_ms'] is not None
                                    else t['tool_wall_latency_ms'] for t in tools),
            'tool_result_chars': sum(t['result_chars'] for t in tools),
            'first_call_ms': times[0], 'last_call_ms': times[-1],
        }
    return report

if __name__ == '__main__':
    for path in sys.argv[1:]:
        print(path)
        for sid, figures in analyse(path).items():
            print(' ', sid)
            for k, v in figures.items():
                print(f'    {k:22} {v}')
