#!/usr/bin/env python3
"""Independent reference for the Gemini CLI reader: replays a chat file the way Gemini CLI's
loadConversationRecord does (JSON document or JSON Lines; the last copy of a message id wins at
the place of its first copy; `$set` only updates metadata here; `$rewindTo` marks a cut) and
counts typed prompts: a user message with text, minus what the CLI writes as the user by
itself (its own rule, isIgnoredUserContent: `/`, `?`, `<session_context>`, `<hook_context>`;
and the texts its code sends (google-gemini/gemini-cli at 5411f113, issue 25): the IDE
context ("Here is the user's editor context…", "Here is a summary of changes in the user's
editor context…"), the workspace listing ("- **Workspace Directories:**"), the plan-mode
notices ("User has manually exited Plan Mode.", "Plan approved. Switching to "), loop recovery
("System: Potential loop detected."), the next-speaker nudge ("Please continue." exactly), `!`
shell results ("I ran the following shell command:") and background completions ("Background
execution update:")), counted apart as `other`; LLM calls (gemini messages), Σinput
(input + tool), Σcached, Σoutput (output + thoughts), tool calls, failed ones (status error or
cancelled) and rewinds with the number of messages each drops. Run:
  python3 test/reference/gemini_chat.py FILE"""
import json, sys

def records(path):
    text = open(path, encoding='utf-8').read()
    try:
        doc = json.loads(text)
        return [doc] if isinstance(doc, dict) else []
    except json.JSONDecodeError:
        return [json.loads(l) for l in text.splitlines() if l.strip()]

def text_of(content):
    if isinstance(content, str):
        return content
    return '\n'.join(p.get('text', '') for p in content or [] if isinstance(p, dict) and p.get('text'))

order, latest, rewinds = [], {}, []
for r in records(sys.argv[1]):
    if 'messages' in r and 'sessionId' in r:          # a whole chat document
        stream = r['messages']
    elif '$rewindTo' in r:
        order.append(('rewind', r['$rewindTo'])); continue
    elif 'id' in r and 'type' in r:
        stream = [r]
    else:
        continue
    for m in stream:
        if m['id'] not in latest:
            order.append(('message', m['id']))
        latest[m['id']] = m

CLI_WRITTEN = ('<session_context>', '<hook_context>', "Here is the user's editor context",
               "Here is a summary of changes in the user's editor context", '- **Workspace Directories:**',
               'User has manually exited Plan Mode.', 'Plan approved. Switching to ', 'System: Potential loop detected.',
               'I ran the following shell command:', 'Background execution update:', '/', '?')
prompts = calls = tools = failed = other = 0
tok_in = tok_cached = tok_out = 0
alive = []
for kind, key in order:
    if kind == 'rewind':
        at = alive.index(key) if key in alive else 0
        rewinds.append((calls, len(alive) - at))
        del alive[at:]
        continue
    m = latest[key]
    alive.append(key)
    if m['type'] == 'user':
        t = text_of(m.get('content')).strip()
        if t and (t.startswith(CLI_WRITTEN) or t == 'Please continue.'):
            other += 1
        elif t:
            prompts += 1
    elif m['type'] == 'gemini':
        calls += 1
        t = m.get('tokens') or {}
        tok_in += t.get('input', 0) + t.get('tool', 0)
        tok_cached += t.get('cached', 0)
        tok_out += t.get('output', 0) + t.get('thoughts', 0)
        for tc in m.get('toolCalls') or []:
            tools += 1
            failed += tc.get('status') in ('error', 'cancelled')

print(f'prompts {prompts} other {other} calls {calls} input {tok_in} cached {tok_cached} output {tok_out} tools {tools} failed {failed}')
print('rewinds (before call, messages dropped):', rewinds)
