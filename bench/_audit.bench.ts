import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { forEachStringLiteral, decodeLiteral } from '../src/core/redact/jsonStrings';
import { entropyFindings } from '../src/core/redact/entropyRules';
import { gitleaksFindings } from '../src/core/redact/gitleaksRules';
import { ownFindings } from '../src/core/redact/ownRules';
import { privateKeyFindings } from '../src/core/redact/privateKeys';
const root = resolve(__dirname, '../..');
const dirs = [join(root, 'test/fixtures'), ...(process.argv[2] ? [process.argv[2]] : [])];
const skip = new Set(['hostile', 'bad-input', 'gitleaks-cases', 'secretlint-vectors', 'redaction-benign', 'workloads']);
const files: string[] = [];
const walk = (d: string): void => { for (const e of readdirSync(d)) { const p = join(d, e); if (statSync(p).isDirectory()) { if (!skip.has(e)) walk(p); } else if (/\.(jsonl|json|traj)$/.test(e)) files.push(p); } };
for (const d of dirs) walk(d);
const seen = new Set<string>();
const only = process.env.KIND;
function scan(v: string, f: string) {
  for (const det of [ownFindings, gitleaksFindings, privateKeyFindings, entropyFindings]) for (const x of det(v)) {
    if (x.kind === 'home-user' || x.kind === 'email') continue;
    if (only && x.kind !== only) continue;
    const val = v.slice(x.start, x.end); const key = x.kind + val; if (seen.has(key)) continue; seen.add(key);
    console.log(`${x.kind}\t${val.slice(0, 80)}\t| ${v.slice(Math.max(0, x.start - 50), x.start).replace(/\n/g, '⏎')}\t${f.split('/').slice(-2).join('/')}`);
  }
}
for (const f of files) for (const line of readFileSync(f, 'utf8').split('\n')) forEachStringLiteral(line, (s, e) => { const v = decodeLiteral(line.slice(s, e)); if (v && v.length >= 8) { scan(v, f); if (v.startsWith('{')||v.startsWith('[')) { forEachStringLiteral(v, (a,b)=>{ const w = decodeLiteral(v.slice(a,b)); if (w && w.length>=8) scan(w, f); }); } } });
