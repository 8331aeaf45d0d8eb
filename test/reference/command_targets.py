#!/usr/bin/env python3
"""Independent reference for retry loops over shell commands in a Claude Code log, with
shell wrappers taken apart. A different method from the reader: Python's shlex splits each
command (the reader uses its own tokenizer), a wrapper (bash/sh/zsh -c, -lc; powershell,
pwsh -Command/-c; cmd /c) is replaced by the script it runs, and a command's target is its
program and first argument (three words for `npm run X`, `uv run X` and the like), flags
and variable assignments left out, `cd` skipped. A loop is 3 or more failed Bash results on
one target with no success on that target in between. Prints each loop: target, attempts,
1-based lines of the first and last failed result.

Run: python3 test/reference/command_targets.py FILE.jsonl"""
import json, re, shlex, sys

RUNNERS = {'npm': {'run', 'run-script', 'exec'}, 'pnpm': {'run', 'exec', 'dlx'}, 'yarn': {'run', 'exec', 'dlx'},
           'bun': {'run', 'x'}, 'uv': {'run', 'tool'}, 'poetry': {'run'}, 'pipenv': {'run'}, 'pdm': {'run'},
           'hatch': {'run'}, 'deno': {'task', 'run'}, 'dotnet': {'run', 'tool'}}

def program(word):
    return re.split(r'[\\/]', word.strip('"\''))[-1].lower().removesuffix('.exe')

def pieces(command):
    """The command's segments (split on && || ; | and newlines, outside quotes) as word lists."""
    command = re.sub(r'\d*>&\d+', ' ', command)  # 2>&1 is a redirection, not a separator
    try:
        lex = shlex.shlex(command, posix=True, punctuation_chars='&|;')
        lex.whitespace_split = True
        words = list(lex)
    except ValueError:
        words = command.split()
    seg, out = [], []
    for w in words:
        if w in ('&&', '||', ';', '|', '&', ';;') or set(w) <= set('&|;'):
            if seg: out.append(seg)
            seg = []
        else:
            seg.append(w)
    if seg: out.append(seg)
    return out

def unwrap(seg, depth=0):
    p = program(seg[0])
    flag = None
    if p in ('bash', 'sh', 'zsh', 'dash', 'ksh', 'fish'):
        flag = next((i for i, w in enumerate(seg[1:], 1) if re.fullmatch(r'-[a-z]*c[a-z]*', w)), None)
    elif p in ('powershell', 'pwsh'):
        flag = next((i for i, w in enumerate(seg[1:], 1) if w.lower() in ('-c', '-command', '/c', '/command')), None)
    elif p == 'cmd':
        flag = next((i for i, w in enumerate(seg[1:], 1) if w.lower() in ('/c', '/k')), None)
    if flag is None or flag == len(seg) - 1 or depth > 3:
        return [seg]
    script = ' '.join(seg[flag + 1:])
    return [s for inner in pieces(script) for s in unwrap(inner, depth + 1)]

def target(command):
    parts = []
    for seg in pieces(command):
        for s in unwrap(seg):
            words = [w for w in s if not w.startswith('-') and not re.match(r'[A-Za-z_][A-Za-z0-9_]*=', w)]
            if not words or words[0] in ('cd', 'source', '.') or words[0].lower() in ('set-location', 'pushd', 'popd'):
                continue
            keep = 3 if program(words[0]) in RUNNERS and len(words) > 1 and words[1] in RUNNERS[program(words[0])] else 2
            parts.append(' '.join(words[:keep]))
    return ' && '.join(parts) if parts else command.strip()[:80]

def loops(path):
    commands, events = {}, []
    for n, line in enumerate(open(path, encoding='utf-8'), 1):
        try:
            r = json.loads(line)
        except ValueError:
            continue
        c = (r.get('message') or {}).get('content')
        if not isinstance(c, list):
            continue
        for b in c:
            if not isinstance(b, dict):
                continue
            if b.get('type') == 'tool_use' and b.get('name') == 'Bash':
                commands[b['id']] = b['input'].get('command', '')
            if b.get('type') == 'tool_result' and b.get('tool_use_id') in commands:
                text = b.get('content') if isinstance(b.get('content'), str) else ''
                collateral = text.startswith('Sibling tool call errored') or "doesn't want to proceed" in text
                events.append((n, target(commands[b['tool_use_id']]), b.get('is_error') is True, collateral))
    open_runs, found = {}, []
    for n, t, failed, collateral in events:
        if not failed:
            run = open_runs.pop(t, None)
            if run and len(run) >= 3: found.append((t, run))
        elif not collateral:
            open_runs.setdefault(t, []).append(n)
    found += [(t, run) for t, run in open_runs.items() if len(run) >= 3]
    return sorted(found, key=lambda x: x[1][0])

if __name__ == '__main__':
    for t, run in loops(sys.argv[1]):
        print('%-40s attempts %d  lines %d-%d' % (t, len(run), run[0], run[-1]))
