#!/usr/bin/env python3
"""Independent reference for the agents' own OpenTelemetry log events (Claude Code, Codex).

Reads an OTLP/JSON logs document, or JSON Lines of them (what a collector's file exporter or
a receiver that appends each POST body writes), walks resourceLogs -> scopeLogs -> logRecords
and counts, per session (Claude Code's `session.id`, Codex's `conversation.id`), by the rules
of docs/design/formats.md §5:
- calls: Claude Code `claude_code.api_request` (the body names the event; `event.name` holds
  the bare name); Codex `codex.sse_event` whose `event.kind` is "response.completed";
- tokens: Claude Code counts input apart from the cache (input = input_tokens +
  cache_read_tokens + cache_creation_tokens, cached = cache reads, cache write = cache
  creation); Codex's input_token_count already holds the cached part;
- turns: `user_prompt` events, and how many of them carry a prompt that was logged (not the
  placeholder the agent writes instead: Claude Code "<REDACTED>", Codex "[REDACTED]");
- times: `event.timestamp` (ISO 8601, ms), else the record's timeUnixNano, else its
  observedTimeUnixNano (0 means unset); a call starts duration_ms before it ended (Claude Code).
Values may be intValue as a number or a decimal string, or (Codex) a stringValue.
Prints one JSON object: {session id: figures}.
Run: python3 test/reference/otlp_agent_events.py FILE"""
import json, sys
from datetime import datetime

PLACEHOLDERS = {'<REDACTED>', '[REDACTED]'}


def documents(path):
    text = open(path, encoding='utf-8').read()
    try:
        return [json.loads(text)]
    except json.JSONDecodeError:
        return [json.loads(line) for line in text.splitlines() if line.strip()]


def value(v):
    if not isinstance(v, dict):
        return None
    for kind in ('stringValue', 'intValue', 'doubleValue', 'boolValue'):
        if kind in v:
            return v[kind]
    return None


def number(v):
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, (int, float)):
        return int(v)
    if isinstance(v, str) and v.strip().isdigit():
        return int(v.strip())
    return None


def millis(attrs, record):
    stamp = attrs.get('event.timestamp')
    if isinstance(stamp, str):
        return int(datetime.fromisoformat(stamp.replace('Z', '+00:00')).timestamp() * 1000 + 0.5)
    for key in ('timeUnixNano', 'observedTimeUnixNano'):
        ns = number(record.get(key))
        if ns:
            return ns // 1_000_000
    return None


def events(path):
    for doc in documents(path):
        for rl in doc.get('resourceLogs') or []:
            resource = {a['key']: value(a.get('value')) for a in (rl.get('resource') or {}).get('attributes') or []}
            for sl in rl.get('scopeLogs') or []:
                for r in sl.get('logRecords') or []:
                    attrs = {a['key']: value(a.get('value')) for a in r.get('attributes') or []}
                    body = value(r.get('body'))
                    name = attrs.get('event.name')
                    if isinstance(body, str) and body.startswith('claude_code.'):
                        name = body
                    elif resource.get('service.name') == 'claude-code' and isinstance(name, str) and not name.startswith('claude_code.'):
                        name = 'claude_code.' + name
                    yield name, attrs, resource, millis(attrs, r)


def analyse(path):
    sessions = {}
    for name, a, resource, t in events(path):
        if not isinstance(name, str):
            continue
        agent = 'claude-code' if name.startswith('claude_code.') else 'codex' if name.startswith('codex.') else None
        if agent is None:
            continue
        sid = a.get('session.id') if agent == 'claude-code' else a.get('conversation.id')
        s = sessions.setdefault(sid, {'agent': agent, 'version': None, 'calls': 0, 'input': 0, 'cached': 0, 'cacheWrite': 0, 'output': 0, 'reasoning': 0,
                                      'turns': 0, 'promptsLogged': 0, 'models': [], 'callTimes': []})
        s['version'] = s['version'] or a.get('app.version') or resource.get('service.version')
        short = name.split('.', 1)[1]
        if short == 'user_prompt':
            s['turns'] += 1
            if isinstance(a.get('prompt'), str) and a['prompt'] and a['prompt'] not in PLACEHOLDERS:
                s['promptsLogged'] += 1
        elif agent == 'claude-code' and short == 'api_request':
            s['calls'] += 1
            uncached, read, written, out = (number(a.get(k)) for k in ('input_tokens', 'cache_read_tokens', 'cache_creation_tokens', 'output_tokens'))
            s['input'] += uncached + read + written
            s['cached'] += read
            s['cacheWrite'] += written
            s['output'] += out
            s['models'].append(a.get('model'))
            duration = number(a.get('duration_ms'))
            s['callTimes'].append([t - duration if duration is not None else t, t])
        elif agent == 'codex' and short == 'sse_event' and a.get('event.kind') == 'response.completed' and 'error.message' not in a:
            s['calls'] += 1
            s['input'] += number(a.get('input_token_count'))
            s['cached'] += number(a.get('cached_token_count'))
            s['output'] += number(a.get('output_token_count'))
            s['reasoning'] += number(a.get('reasoning_token_count')) or 0
            s['models'].append(a.get('model') or a.get('slug'))
            s['callTimes'].append([t, t])
    for s in sessions.values():
        if s['agent'] == 'codex':
            del s['cacheWrite']  # Codex's events carry no cache-write count
        else:
            del s['reasoning']  # nor Claude Code's a reasoning count
    return sessions


if __name__ == '__main__':
    print(json.dumps(analyse(sys.argv[1]), sort_keys=True))
