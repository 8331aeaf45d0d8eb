import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv from 'ajv';
import { writeCanonical } from '../../src/core/trace/canonical/canonicalFormat';
import type { Session } from '../../src/core/trace/model';
import type { ParsedTrace } from '../../src/core/trace/parseTrace';
import { parseText, repoRoot } from './helpers';

const schema: unknown = JSON.parse(readFileSync(join(repoRoot, 'schema/agent-trace-v1.schema.json'), 'utf8'));
const validateRecord = new Ajv({ allErrors: true }).compile(schema as object);

/** Schema errors of every line of a canonical text, as "line N: message". */
export function schemaFailures(text: string): string[] {
  const failures: string[] = [];
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    if (!validateRecord(JSON.parse(line))) failures.push(`line ${i + 1}: ${JSON.stringify(validateRecord.errors)}`);
  });
  return failures;
}

/** The model without source positions (`source`, `resultSource`), which differ between formats by design. */
export function withoutSources(sessions: Session[]): unknown {
  return JSON.parse(
    JSON.stringify(sessions, (key, value: unknown) => (key === 'source' || key === 'resultSource' ? undefined : value)),
  );
}

/**
 * Converts a parsed trace to the canonical format, checks every written line against
 * the JSON Schema, reads it back and asserts the same sessions came back.
 */
export async function assertRoundTrip(original: ParsedTrace): Promise<void> {
  assert.equal(original.problem, null, original.problem?.message);
  const text = writeCanonical(original.model, 'roundTrip.ts');
  assert.deepEqual(schemaFailures(text), []);
  const reread = await parseText(text, 'x.trace.jsonl');
  assert.equal(reread.problem, null);
  assert.equal(reread.model.format, 'agent-trace');
  assert.deepEqual(withoutSources(reread.model.sessions), withoutSources(original.model.sessions));
}
