#!/usr/bin/env python3
"""Independent reference for the Gemini CLI reader: replays a chat file the way Gemini CLI's
loadConversationRecord does (JSON document or JSON Lines; the last copy of a message id wins at
the place of its first copy; `$set` only updates metadata here; `$rewindTo` marks a cut) and
counts typed prompts with the CLI's own rule (isIgnoredUserContent: empty text, `/`, `?`,
`<session_context>`, `<hook_context>` are not prompts), LLM calls (gemini messages), Σinput
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

prompts = calls = tools = failed = 0
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
        if t and not t.startswith(('/', '?', '<session_context>', '<hook_context>')):
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

print(f'prompts {prompts} calls {calls} input {tok_in} cached {tok_cached} output {tok_out} tools {tools} failed {failed}')
print('rewinds (before call, messages dropped):', rewinds)
