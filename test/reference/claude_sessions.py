#!/usr/bin/env python3
"""Independent reference for how the Claude Code reader splits a log into sessions and
counts what a person typed. Plain Python over the raw lines, a different method from the
reader: every record is routed to its session first (main thread, sibling agent-*.jsonl
files with the same sessionId, agentId sub-agents, inline sidechain chains grouped by
following parentUuid back to a root), then each session is counted on its own.

Per session it prints: LLM calls (distinct message.id, <synthetic> excluded), Σinput
(input + cache_creation + cache_read of each call's first line), Σcached, Σoutput (largest
output_tokens of each call), tool calls, failed tool results (is_error true, paired or
not), typed prompts, the user records that are not typed prompts by kind, and API errors
(isApiErrorMessage assistant lines and system/api_error records). For an inline chain it also
prints the Task tool_use (in another session) whose prompt is the chain's first text.

Run: python3 test/reference/claude_sessions.py FILE.jsonl [SIBLING.jsonl ...]"""
import json, re, sys
from collections import OrderedDict

KINDS = [('<task-notification>', 'notification'), ('<local-command-stdout>', 'localCommand'),
         ('<local-command-stderr>', 'localCommand'), ('<local-command-caveat>', 'localCommand'),
         ('<bash-input>', 'localCommand'), ('<bash-stdout>', 'localCommand'), ('<bash-stderr>', 'localCommand'),
         ('Stop hook feedback:', 'hookOutput'), ('<user-prompt-submit-hook>', 'hookOutput'),
         ('[Request interrupted by user', 'interruption')]

def records(paths):
    for path in paths:
        for n, line in enumerate(open(path, encoding='utf-8'), 1):
            try:
                yield path, n, json.loads(line)
            except ValueError:
                continue  # an unreadable line belongs to no session

def route(paths):
    sessions = OrderedDict()
    chain = {}  # inline sidechain uuid -> session key
    inline = 0
    for path, n, r in records(paths):
        sid = r.get('sessionId')
        if sid is None:
            continue
        if not r.get('isSidechain'):
            key = sid
        elif r.get('agentId'):
            key = sid + '/' + r['agentId']
        else:
            key = chain.get(r.get('parentUuid'))
            if key is None:
                inline += 1
                key = '%s/inline-%d' % (sid, inline)
            if r.get('uuid'):
                chain[r['uuid']] = key
        sessions.setdefault(key, []).append((path, n, r))
    return sessions

def user_text(r):
    c = (r.get('message') or {}).get('content')
    if isinstance(c, str):
        return c
    if isinstance(c, list):
        for b in c:
            if isinstance(b, dict) and b.get('type') == 'text':
                return b.get('text')
    return None

def count(rows):
    calls = OrderedDict()
    tools = failed = 0
    typed = 0
    other = {k: 0 for k in ['notification', 'localCommand', 'hookOutput', 'compactionSummary', 'interruption', 'injected']}
    api_errors = 0
    pending_slash = False
    for _, _, r in rows:
        t = r.get('type')
        if t == 'assistant':
            m = r['message']
            if m.get('model') == '<synthetic>':
                if r.get('isApiErrorMessage'):
                    api_errors += 1
                continue
            u = m.get('usage') or {}
            if m['id'] not in calls:
                calls[m['id']] = [u.get('input_tokens', 0) + u.get('cache_creation_input_tokens', 0) + u.get('cache_read_input_tokens', 0),
                                  u.get('cache_read_input_tokens', 0), u.get('output_tokens', 0)]
                if pending_slash:
                    typed += 1  # a /command the model answered was typed
                    pending_slash = False
            else:
                calls[m['id']][2] = max(calls[m['id']][2], u.get('output_tokens', 0))
            tools += sum(1 for b in m.get('content') or [] if isinstance(b, dict) and b.get('type') == 'tool_use')
        elif t == 'system' and r.get('subtype') == 'api_error':
            api_errors += 1
        elif t == 'user':
            c = (r.get('message') or {}).get('content')
            if isinstance(c, list):
                failed += sum(1 for b in c if isinstance(b, dict) and b.get('type') == 'tool_result' and b.get('is_error') is True)
            text = user_text(r)
            if text is None:
                continue
            s = text.lstrip()
            if r.get('isCompactSummary'):
                other['compactionSummary'] += 1
                continue
            kind = next((k for prefix, k in KINDS if s.startswith(prefix)), None)
            if kind is None and r.get('isMeta'):
                kind = 'injected'
            if kind:
                other[kind] += 1
                continue
            if pending_slash:
                other['localCommand'] += 1  # the previous /command got no answer
            pending_slash = bool(re.search(r'<command-name>', s))
            if not pending_slash:
                typed += 1
    if pending_slash:
        other['localCommand'] += 1
    # Calls the reader could not pair with a readable tool_use still count, as their own failed calls.
    return {'llmCalls': len(calls), 'input': sum(c[0] for c in calls.values()), 'cached': sum(c[1] for c in calls.values()),
            'output': sum(c[2] for c in calls.values()), 'toolUses': tools, 'failedResults': failed,
            'typed': typed, 'other': other, 'apiErrors': api_errors}

def started_by(sessions):
    """For each inline chain: the Task tool_use, in another session, whose prompt is the chain's first text."""
    prompts = {}
    for key, rows in sessions.items():
        for _, _, r in rows:
            if r.get('type') != 'assistant':
                continue
            for b in r['message'].get('content') or []:
                if isinstance(b, dict) and b.get('type') == 'tool_use' and isinstance(b.get('input'), dict) and 'prompt' in b['input']:
                    prompts.setdefault(b['input']['prompt'], []).append((key, b['id']))
    found = {}
    for key, rows in sessions.items():
        if '/inline-' not in key:
            continue
        first = next((user_text(r) for _, _, r in rows if r.get('type') == 'user' and user_text(r)), None)
        found[key] = [tid for owner, tid in prompts.get(first, []) if owner != key]
    return found

if __name__ == '__main__':
    sessions = route(sys.argv[1:])
    starters = started_by(sessions)
    for key, rows in sessions.items():
        print(key)
        for k, v in count(rows).items():
            print('  %-13s %s' % (k, v))
        if key in starters:
            print('  %-13s %s' % ('startedBy', ' '.join(starters[key]) or '-'))
