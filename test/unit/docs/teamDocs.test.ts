import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { NAMED_QUERIES } from '../../../src/core/team/namedQueries';
import { TEAM_SCHEMA_VERSION, TEAM_TABLES } from '../../../src/core/team/teamSchema';
import { repoRoot } from '../../support/helpers';

const reference = readFileSync(join(repoRoot, 'docs/reference/parquet.md'), 'utf8');
const guide = readFileSync(join(repoRoot, 'docs/guide/team.md'), 'utf8');

describe('the team docs follow the code', () => {
  it('docs/reference/parquet.md names the schema version and documents every column of every table', () => {
    assert.match(reference, new RegExp(`^# Parquet tables .*schema version ${TEAM_SCHEMA_VERSION}$`, 'm'));
    for (const table of TEAM_TABLES) {
      const start = reference.indexOf(`## \`${table.name}\``);
      assert.ok(start >= 0, `no section for ${table.name}`);
      const next = reference.indexOf('\n## ', start + 1);
      const section = reference.slice(start, next < 0 ? undefined : next);
      const documented = new Set([...section.matchAll(/`([^`]+)`/g)].map((m) => m[1]!));
      // `cost_*_usd` documents the dollar columns by kind in the sessions table.
      const missing = table.columns.filter(
        (c) => !documented.has(c.name) && !(/^cost_.+_usd$/.test(c.name) && documented.has('cost_*_usd')),
      );
      assert.deepEqual(
        missing.map((c) => c.name),
        [],
        `${table.name}: undocumented columns`,
      );
    }
  });

  it('docs/guide/team.md lists every named query, and the Trino statement declares the calls columns in file order', () => {
    for (const q of NAMED_QUERIES) assert.ok(guide.includes(`| \`${q.name}\` |`), q.name);
    const ddl = /CREATE TABLE hive\.agent_trace\.calls \(([\s\S]*?)\)\nWITH/.exec(guide)![1]!;
    const declared = ddl
      .split(',')
      .map((c) => c.trim().split(/\s+/)[0]!)
      .filter((c) => c.length > 0);
    const expected = [...TEAM_TABLES[0]!.columns.map((c) => c.name.replace(/\./g, '_')), 'agent', 'date', 'machine'];
    assert.deepEqual(declared, expected);
  });
});
