#!/usr/bin/env python3
"""Independent reference for tool calls the user denied (issue 25: one rule for every agent).
Counts, per agent, the calls whose result is the agent's own answer to a refusal:
- Claude Code (.jsonl): tool_result blocks with is_error whose text starts "The user doesn't
  want to " (a rejected or dismissed permission prompt), once per tool_use_id;
- Gemini CLI chat (.json with sessionId + messages): tool calls with status "cancelled" whose
  function response error says "User denied execution" (last copy of each message);
- OpenCode export (.json with info + messages): tool parts with state.status "error" whose
  error starts "The user rejected permission to use";
- Cline / Roo Code ui_messages.json: results "[tool …] Result:" followed by "The user denied
  this operation" in the request text of each api_req_started.
Run: python3 test/reference/tool_denials.py FILE"""
import json, re, sys

path = sys.argv[1]
text = open(path, encoding='utf-8').read()

def result_text(content):
    if isinstance(content, str):
        return content
    return '\n'.join(b.get('text', '') for b in content or [] if isinstance(b, dict))

try:
    doc = json.loads(text)
except json.JSONDecodeError:
    doc = None

if doc is None:  # Claude Code JSON Lines
    denied = {}
    for n, line in enumerate(text.splitlines(), 1):
        try:
            r = json.loads(line)
        except json.JSONDecodeError:
            continue
        content = ((r.get('message') or {}).get('content')) if r.get('type') == 'user' else None
        for b in content if isinstance(content, list) else []:
            if isinstance(b, dict) and b.get('type') == 'tool_result' and b.get('is_error') and result_text(b.get('content')).lstrip().startswith("The user doesn't want to "):
                denied.setdefault(b.get('tool_use_id'), n)
    print('claude-code denied', len(denied), 'on lines', sorted(denied.values()))
elif isinstance(doc, dict) and 'sessionId' in doc:
    latest = {}
    for m in doc['messages']:
        latest[m['id']] = m
    n = 0
    for m in latest.values():
        for tc in m.get('toolCalls') or []:
            errors = [((r.get('functionResponse') or {}).get('response') or {}).get('error') or '' for r in tc.get('result') or [] if isinstance(r, dict)]
            n += tc.get('status') == 'cancelled' and any('User denied execution' in e for e in errors)
    print('gemini-cli denied', n)
elif isinstance(doc, dict) and 'info' in doc:
    n = 0
    for m in doc['messages']:
        for p in m.get('parts') or []:
            st = p.get('state') or {}
            n += p.get('type') == 'tool' and st.get('status') == 'error' and (st.get('error') or '').startswith('The user rejected permission to use')
    print('opencode denied', n)
else:
    n = results = 0
    for m in doc:
        if m.get('say') == 'api_req_started':
            request = (json.loads(m.get('text') or '{}') or {}).get('request') or ''
            results += len(re.findall(r"^\[[A-Za-z_]+(?: for '.*?')?\] Result:", request, re.M | re.S))
            n += len(re.findall(r"\] Result:\s*The user denied this operation", request))
    print('cline denied', n, 'of', results, 'tool results')
