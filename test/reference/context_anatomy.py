#!/usr/bin/env python3
"""Independent reference for the context anatomy of a one-session Claude Code log.

Reads the raw JSON Lines (no code shared with the TypeScript), splits what each call
appended into parts by source, counts each part as ceil(UTF-16 length / 4) tokens (the
test injects the same counter, so the tokenizer library is not what is checked here),
calibrates against the logged input growth, estimates the unlogged base and what a
compaction restored, and charges each call's input dollars to the parts it carried at
Anthropic's published per-million-token rates (https://docs.anthropic.com/en/docs/about-claude/pricing).

Usage: context_anatomy.py LOG.jsonl  -> JSON on stdout.
"""
import json
import math
import sys

# $/MTok: input, cache read, 5-minute write, 1-hour write.
RATES = {
    'claude-opus-4-6': (5.0, 0.5, 6.25, 10.0),
    'claude-haiku-4-5-20251001': (1.0, 0.1, 1.25, 2.0),
}
SUBAGENT = {'Task', 'Agent'}
WRITTEN_BY_AGENT = ('<task-notification>', '<local-command-stdout>', '<local-command-stderr>', '<local-command-caveat>',
                    '<command-name>', '<bash-input>', '<bash-stdout>', '<bash-stderr>', 'Stop hook feedback:',
                    '<user-prompt-submit-hook>', '[Request interrupted by user', '<system-reminder>')


def tokens(text):
    return math.ceil(len(text.encode('utf-16-le')) / 2 / 4)


def js_round(x):
    return math.floor(x + 0.5)


def median(xs):
    if not xs:
        return None
    s = sorted(xs)
    m = len(s) // 2
    return s[m] if len(s) % 2 else (s[m - 1] + s[m]) / 2


def text_kind(text, meta):
    return 'injected' if meta or text.lstrip().startswith(WRITTEN_BY_AGENT) else 'userText'


def read(path):
    calls, pieces, boundaries, tools, seen = [], [], [], {}, set()
    for n, line in enumerate(open(path, encoding='utf-8')):
        if not line.strip():
            continue
        o = json.loads(line)
        t = o.get('type')
        if t == 'system' and o.get('subtype') == 'compact_boundary':
            boundaries.append(n)
        if t not in ('user', 'assistant'):
            continue
        m = o['message']
        c = m.get('content')
        if t == 'assistant':
            if m['id'] not in seen and 'usage' in m:
                seen.add(m['id'])
                u = m['usage']
                cc = u.get('cache_creation') or {}
                calls.append({'line': n, 'model': m['model'], 'uncached': u['input_tokens'], 'read': u['cache_read_input_tokens'],
                              'w5': cc.get('ephemeral_5m_input_tokens', 0), 'w1': cc.get('ephemeral_1h_input_tokens', 0),
                              'input': u['input_tokens'] + u['cache_read_input_tokens'] + u['cache_creation_input_tokens']})
            for b in c:
                if b['type'] == 'text' and b['text']:
                    pieces.append((n, 'assistantText', b['text']))
                elif b['type'] == 'thinking' and b['thinking']:
                    pieces.append((n, 'thinking', b['thinking']))
                elif b['type'] == 'tool_use':
                    tools[b['id']] = b['name']
                    pieces.append((n, 'toolUse', b['name'] + ' ' + json.dumps(b['input'], ensure_ascii=False, separators=(',', ':'))))
        else:
            if isinstance(c, str):
                kind = 'compactionSummary' if o.get('isCompactSummary') else text_kind(c, o.get('isMeta') is True)
                if c:
                    pieces.append((n, kind, c))
                continue
            for b in c:
                if b['type'] == 'text' and b['text']:
                    kind = 'compactionSummary' if o.get('isCompactSummary') else text_kind(b['text'], o.get('isMeta') is True)
                    pieces.append((n, kind, b['text']))
                elif b['type'] == 'tool_result':
                    r = b.get('content')
                    text = r if isinstance(r, str) else '\n'.join(x['text'] for x in (r or []) if x.get('type') == 'text')
                    kind = 'subagentResult' if tools.get(b['tool_use_id']) in SUBAGENT else 'toolResult'
                    pieces.append((n, kind, text))
    return calls, pieces, boundaries


def main(path):
    calls, pieces, boundaries = read(path)
    before = [[] for _ in calls]
    k = 0
    for p in pieces:
        while k < len(calls) and not p[0] < calls[k]['line']:
            k += 1
        if k < len(calls):
            before[k].append(p)
    # A compaction sits before the first call after its boundary line.
    compact = {}
    for b in boundaries:
        nxt = next(i for i, c in enumerate(calls) if c['line'] > b)
        compact[nxt] = b
    raw = [[tokens(p[2]) for p in ps] for ps in before]

    rows = []
    for k in range(1, len(calls)):
        if k in compact:
            continue
        logged = calls[k]['input'] - calls[k - 1]['input']
        r = sum(raw[k])
        if logged > 0 and r > 0:
            rows.append((r, len(raw[k]), logged))

    def err(f, b):
        return median([abs(r * f + n * b - l) / l for r, n, l in rows])

    cands = [(1.0, 0.0), (median([l / r for r, n, l in rows]) or 1.0, 0.0)]
    if len(rows) >= 3:
        # Weighted least squares of logged = f*raw + b*pieces, weights 1/logged^2: the 2x2 normal equations.
        sxx = sum(r * r / l / l for r, n, l in rows)
        sxy = sum(r * n / l / l for r, n, l in rows)
        syy = sum(n * n / l / l for r, n, l in rows)
        sxz = sum(r / l for r, n, l in rows)
        syz = sum(n / l for r, n, l in rows)
        det = sxx * syy - sxy * sxy
        f = (sxz * syy - syz * sxy) / det
        b = (sxx * syz - sxy * sxz) / det
        if f > 0 and b >= 0:
            cands.append((f, b))
    best, best_err = cands[0], err(*cands[0])
    for c in cands[1:]:
        e = err(*c)
        if e < best_err:
            best, best_err = c, e
    f, b = best

    def scaled(x):
        return js_round(x * f + b)

    parts = []

    def part(kind, toks, k):
        parts.append({'kind': kind, 'tokens': toks, 'firstCall': k, 'lastCall': k, 'usd': 0.0, 'read': 0.0, 'write': 0.0, 'writes': 0})
        return parts[-1]

    base = part('system', max(0, js_round(calls[0]['input'] - sum(scaled(x) for x in raw[0]))), 0)
    live = [base]
    out_calls = []
    for k, c in enumerate(calls):
        if k in compact and k > 0:
            live = [base]
        for p, x in zip(before[k], raw[k]):
            if k in compact and p[0] < compact[k]:
                continue
            live.append(part(p[1], scaled(x), k))
        if k in compact and k > 0:
            rest = js_round(c['input'] - sum(p['tokens'] for p in live))
            if rest > 0:
                live.append(part('restored', rest, k))
        for p in live:
            p['lastCall'] = k
        est = sum(p['tokens'] for p in live)
        rin, rread, r5, r1 = (x / 1e6 for x in RATES[c['model']])
        read_usd = c['read'] * rread
        write_usd = c['uncached'] * rin + c['w5'] * r5 + c['w1'] * r1
        cached = c['read']
        read_rate = read_usd / cached if cached else 0
        written_tokens = c['input'] - cached
        write_rate = write_usd / written_tokens if written_tokens else 0
        at = 0.0
        for p in live:
            t = p['tokens'] * c['input'] / est
            rd = max(0.0, min(t, cached - at))
            wr = t - rd
            at += t
            p['read'] += rd * read_rate
            p['write'] += wr * write_rate
            p['usd'] += rd * read_rate + wr * write_rate
            if wr > t / 2 and t > 0:
                p['writes'] += 1
        by_kind = {}
        for p in live:
            by_kind[p['kind']] = by_kind.get(p['kind'], 0) + p['tokens']
        out_calls.append({'loggedInput': c['input'], 'estimatedInput': est, 'inputUsd': read_usd + write_usd, 'byKind': by_kind})
    json.dump({'factor': f, 'perPiece': b, 'comparedCalls': len(rows), 'medianAbsError': best_err,
               'calls': out_calls, 'parts': parts}, sys.stdout, indent=1)


if __name__ == '__main__':
    main(sys.argv[1])
