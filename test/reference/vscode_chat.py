#!/usr/bin/env python3
"""Independent reference for the VS Code Copilot Chat reader.

Reads a chat session file (.json: the store or Chat: Export Chat) or replays the operation log
(.jsonl: kind 0 state, 1 set, 2 truncate-and-push, 3 delete, as VS Code's objectMutationLog.ts
describes them) and counts, per the rules of docs/design/formats.md §19: turns (one per
request), model calls (one per toolCallRound; one for a request answered without rounds),
tool calls by name, failed tools (a terminal exit code other than 0, or denied: isConfirmed
type 0), canceled requests, and the recorded token figures (a round's own usage, else the
request's promptTokens/outputTokens on its last call). Prints one JSON object.
Run: python3 test/reference/vscode_chat.py FILE"""
import json, sys


def replay(path):
    state = None
    for line in open(path, encoding='utf-8'):
        if not line.strip():
            continue
        e = json.loads(line)
        if e['kind'] == 0:
            state = e['v']
            continue
        *parents, last = e['k']
        target = state
        for p in parents:
            target = target[p]
        if e['kind'] == 1:
            target[last] = e['v']
        elif e['kind'] == 3:
            target.pop(last, None)
        else:
            items = target[last] if isinstance(target, dict) and last in target else []
            if 'i' in e:
                del items[e['i']:]
            items.extend(e.get('v') or [])
            target[last] = items
    return state


def analyse(session):
    out = {'turns': 0, 'calls': 0, 'tools': {}, 'failedTools': 0, 'canceled': 0, 'input': 0, 'output': 0, 'cached': 0, 'callsWithInput': 0}
    for r in session['requests']:
        out['turns'] += 1
        result = r.get('result') or {}
        md = result.get('metadata') or {}
        rounds = md.get('toolCallRounds') or []
        err = (result.get('errorDetails') or {}).get('message')
        answered = any(isinstance(p.get('value'), str) for p in r.get('response') or [])
        if err and err.lower().startswith('cancel'):
            out['canceled'] += 1
        if not rounds:
            if err and not answered:
                continue
            rounds = [None] if (answered or result) else []
        shown = [p for p in r.get('response') or [] if p.get('kind') == 'toolInvocationSerialized']
        for k, rd in enumerate(rounds):
            out['calls'] += 1
            usage = (rd or {}).get('usage')
            if usage:
                out['input'] += usage['prompt_tokens']
                out['output'] += usage['completion_tokens']
                out['cached'] += (usage.get('prompt_tokens_details') or {}).get('cached_tokens', 0)
                out['callsWithInput'] += 1
            elif k == len(rounds) - 1 and md.get('promptTokens') is not None:
                out['input'] += md['promptTokens']
                out['output'] += md.get('outputTokens', 0)
                out['callsWithInput'] += 1
            for c in (rd or {}).get('toolCalls') or []:
                out['tools'][c['name']] = out['tools'].get(c['name'], 0) + 1
                match = next((p for p in shown if p.get('toolId') == c['name']), None)
                if match is not None:
                    shown.remove(match)
                    state = ((match.get('toolSpecificData') or {}).get('terminalCommandState') or {})
                    denied = isinstance(match.get('isConfirmed'), dict) and match['isConfirmed'].get('type') == 0
                    if denied or state.get('exitCode') not in (None, 0):
                        out['failedTools'] += 1
    return out


if __name__ == '__main__':
    path = sys.argv[1]
    session = replay(path) if path.endswith('.jsonl') else json.load(open(path, encoding='utf-8'))
    print(json.dumps(analyse(session), sort_keys=True))
