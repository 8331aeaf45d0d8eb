import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createRedactor } from '../src/node/secretlintDetector';
const root = resolve(__dirname, '../..');
const data = JSON.parse(readFileSync(join(root, 'test/fixtures/gitleaks-cases/cases.json'), 'utf8')).cases as Array<{ rule: string; secret: string }>;
async function main() {
  const ctx = process.argv[2] ?? 'prose';
  const mk = (s: string) => ctx === 'path' ? `cat /srv/app/releases/${s}/config.yml` : ctx === 'url' ? `curl -s "https://api.example.com/v1/items?ref=${s}&page=2"` : `I checked it and the value ${s} was accepted by the server.`;
  const r = createRedactor();

  for (const c of data) {
    const t = mk(c.secret);
    const o = await r.redactPlainText(t);
    if (o.includes(c.secret.slice(0, 12)) || o.includes(c.secret.slice(-12))) console.log(`${c.rule}\t${c.secret.slice(0, 90)}`);
  }
}
void main();
