// Refreshes src/core/redact/gitleaks/rules.json from gitleaks' published rule set
// (config/gitleaks.toml of https://github.com/gitleaks/gitleaks, MIT, © 2019 Zachary Rice).
// Usage: node scripts/refreshGitleaksRules.mjs <gitleaks checkout> [commit]
//   e.g. git clone --depth 1 https://github.com/gitleaks/gitleaks /tmp/gitleaks
//        node scripts/refreshGitleaksRules.mjs /tmp/gitleaks
// The TOML is re-serialised as JSON (the bundle needs no TOML parser): rule ids, regexes,
// secret groups, entropy thresholds, keywords and allowlists are kept verbatim; descriptions
// and file-path-only rules (`path` without `regex`: the redactor sees text, not files) are
// left out. Then run the redaction tests and `npm run bench:redact`, and update
// docs/redaction.md's figures.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'smol-toml';

const [root, commitArg] = process.argv.slice(2);
if (!root) {
  console.error('usage: node scripts/refreshGitleaksRules.mjs <gitleaks checkout> [commit]');
  process.exit(2);
}
let commit = commitArg;
if (!commit) {
  try {
    commit = execFileSync('git', ['-C', root, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).trim();
  } catch {
    console.error('not a git checkout: give the commit as the second argument');
    process.exit(2);
  }
}
const config = parse(readFileSync(join(root, 'config/gitleaks.toml'), 'utf8'));

/** An allowlist as the redactor uses it: regexes, their target, stop words, the AND/OR condition; paths only as "has some". */
function allowlist(a) {
  const out = {};
  if (a.condition) out.condition = a.condition;
  if (a.regexTarget) out.regexTarget = a.regexTarget;
  if (a.regexes?.length) out.regexes = a.regexes;
  if (a.stopwords?.length) out.stopwords = a.stopwords;
  if (a.paths?.length || a.commits?.length) out.hasPathsOrCommits = true;
  return out;
}

const rules = [];
const skipped = [];
for (const r of config.rules) {
  if (!r.regex) {
    skipped.push(r.id);
    continue;
  }
  const rule = { id: r.id, regex: r.regex };
  if (r.secretGroup) rule.secretGroup = r.secretGroup;
  if (r.entropy) rule.entropy = r.entropy;
  rule.keywords = r.keywords ?? [];
  if (r.allowlists?.length) rule.allowlists = r.allowlists.map(allowlist);
  rules.push(rule);
}
const data = {
  source: {
    repository: 'https://github.com/gitleaks/gitleaks',
    file: 'config/gitleaks.toml',
    commit,
    licence: 'MIT, Copyright (c) 2019 Zachary Rice',
  },
  allowlist: allowlist(config.allowlist ?? {}),
  rules,
};
const out = new URL('../src/core/redact/gitleaks/rules.json', import.meta.url);
writeFileSync(out, JSON.stringify(data, null, 1) + '\n');
console.log(
  `${rules.length} rules written to src/core/redact/gitleaks/rules.json (left out, file-path rules: ${skipped.join(', ') || 'none'})`,
);
