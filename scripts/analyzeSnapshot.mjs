#!/usr/bin/env node
// Before/after check for reader changes: runs the built CLI's `analyze --json` on every
// sample (the committed fixtures, samples/, the shared traces and the local-only samples)
// and writes one JSON file per sample into a folder; `--compare A B` then lists, per sample,
// every value that differs between two such folders.
//
//   node scripts/analyzeSnapshot.mjs --out /tmp/before      (with the old build)
//   node scripts/analyzeSnapshot.mjs --out /tmp/after       (with the new build)
//   node scripts/analyzeSnapshot.mjs --compare /tmp/before /tmp/after
//
// `--cli PATH` runs another build's CLI (another checkout's dist/cli.js) for the snapshot.
//
// Samples: test/fixtures/** and samples/** (trace-like files only), $AGENT_TRACE_SHARED_TRACES
// (or ../shared/traces beside the checkout) and $AGENT_TRACE_LOCAL_SAMPLES when set.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const TRACE_NAME = /\.(jsonl|json|traj)$/i;
/** Folders of fixtures that are not traces (secretlint vectors, hostile cases made to break readers, workloads). */
const NOT_TRACES = /(^|\/)(secretlint-vectors|hostile|workloads)(\/|$)|(^|\/)agent-[^/]*\.jsonl$|\/subagents\//;

function walk(dir, out = []) {
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path, out);
    else if (TRACE_NAME.test(name)) out.push(path);
  }
  return out;
}

function samples() {
  const groups = [
    ['fixtures', join(root, 'test/fixtures')],
    ['samples', join(root, 'samples')],
    ['shared', process.env.AGENT_TRACE_SHARED_TRACES ?? join(root, '../shared/traces')],
    ['local', process.env.AGENT_TRACE_LOCAL_SAMPLES ?? ''],
  ];
  const out = [];
  for (const [label, dir] of groups) {
    if (!dir || dir === 'none' || !existsSync(dir)) continue;
    for (const file of walk(dir)) {
      const rel = relative(dir, file);
      if (NOT_TRACES.test(rel)) continue;
      out.push({ key: `${label}/${rel}`, file });
    }
  }
  return out;
}

function snapshot(outDir, cli) {
  mkdirSync(outDir, { recursive: true });
  for (const { key, file } of samples()) {
    let text;
    try {
      text = execFileSync(process.execPath, [cli, 'analyze', '--json', file], { encoding: 'utf8', maxBuffer: 1 << 30, stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (e) {
      text = e.stdout || JSON.stringify({ failed: String(e.message).slice(0, 500) });
    }
    writeFileSync(join(outDir, `${key.replace(/[\\/]/g, '__')}.json`), text);
    process.stdout.write(`${key}\n`);
  }
}

/** Every leaf that differs, as "path: before → after". */
function diff(a, b, path = '', out = []) {
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') {
    if (JSON.stringify(a) !== JSON.stringify(b)) out.push(`${path || '.'}: ${short(a)} → ${short(b)}`);
    return out;
  }
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const k of keys) diff(a[k], b[k], Array.isArray(a) ? `${path}[${k}]` : `${path}.${k}`, out);
  return out;
}

function short(v) {
  const s = v === undefined ? '(absent)' : JSON.stringify(v);
  return s.length > 260 ? `${s.slice(0, 257)}…` : s;
}

function withoutDiagnostics(report) {
  if (report === null || typeof report !== 'object') return report;
  const rest = { ...report };
  delete rest.diagnostics;
  return rest;
}

function compare(before, after) {
  const names = new Set([...readdirSync(before), ...readdirSync(after)]);
  let changed = 0;
  for (const name of [...names].sort()) {
    const a = existsSync(join(before, name)) ? JSON.parse(readFileSync(join(before, name), 'utf8')) : undefined;
    const b = existsSync(join(after, name)) ? JSON.parse(readFileSync(join(after, name), 'utf8')) : undefined;
    // Diagnostics are compared as sets (one added shifts every index after it): added and removed ones are listed.
    const lines = diff(withoutDiagnostics(a), withoutDiagnostics(b));
    const said = (d) => `line ${d.line ?? '-'} ${d.severity}: ${d.message}`;
    const had = new Set((a?.diagnostics ?? []).map(said));
    const has = new Set((b?.diagnostics ?? []).map(said));
    for (const d of has) if (!had.has(d)) lines.push(`diagnostic added: ${short(d)}`);
    for (const d of had) if (!has.has(d)) lines.push(`diagnostic removed: ${short(d)}`);
    if (lines.length === 0) continue;
    changed += 1;
    console.log(`## ${name.replace(/\.json$/, '').replace(/__/g, '/')}`);
    for (const line of lines) console.log(`  ${line}`);
  }
  console.log(`${changed} of ${names.size} samples differ.`);
}

const args = process.argv.slice(2);
const cliAt = args.indexOf('--cli');
const cli = cliAt >= 0 && args[cliAt + 1] ? resolve(args[cliAt + 1]) : join(root, 'dist/cli.js');
if (args[0] === '--out' && args[1]) snapshot(resolve(args[1]), cli);
else if (args[0] === '--compare' && args[1] && args[2]) compare(resolve(args[1]), resolve(args[2]));
else {
  console.error('usage: analyzeSnapshot.mjs --out DIR [--cli PATH] | --compare BEFORE AFTER');
  process.exit(2);
}
