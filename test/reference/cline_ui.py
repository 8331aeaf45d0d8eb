#!/usr/bin/env python3
"""Independent reference for the Cline reader on a task's ui_messages.json: requests
(api_req_started), Σinput (tokensIn + cacheWrites + cacheReads), Σcached (cacheReads),
Σoutput (tokensOut), typed prompts (the first text when it comes before any request, and
every user_feedback), tools shown (say/ask tool, command, use_mcp_server), API errors
(api_req_failed, error_retry) and context deletions (deleted_api_reqs). Run:
  python3 test/reference/cline_ui.py ui_messages.json"""
import json, sys

msgs = json.load(open(sys.argv[1], encoding='utf-8'))
req = inp = cached = out = typed = tools = api = deleted = 0
for i, m in enumerate(msgs):
    k = m.get('say') or m.get('ask')
    if k == 'api_req_started':
        req += 1
        t = json.loads(m.get('text') or '{}')
        inp += t.get('tokensIn', 0) + t.get('cacheWrites', 0) + t.get('cacheReads', 0)
        cached += t.get('cacheReads', 0)
        out += t.get('tokensOut', 0)
    elif k in ('task', 'user_feedback') or (k == 'text' and req == 0 and typed == 0):
        typed += 1
    elif k in ('tool', 'command', 'use_mcp_server') and req > 0:
        tools += 1
    elif k in ('api_req_failed', 'error_retry'):
        api += 1
    elif k == 'deleted_api_reqs':
        deleted += 1
print('requests', req, 'input', inp, 'cached', cached, 'output', out, 'typed', typed, 'tools', tools, 'apiErrors', api, 'deletions', deleted)
