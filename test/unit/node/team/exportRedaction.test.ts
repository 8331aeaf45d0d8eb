import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_DECLARED_IDS } from '../../../../src/core/redact/idContext';
import { answerRedaction, type RedactionRequest } from '../../../../src/node/team/exportRows';
import { createRedactor } from '../../../../src/node/secretlintDetector';

// The export's id columns hold the trace's own ids: left as they are, as a JSON trace's id
// fields are, however many an export has. The redactor remembers at most MAX_DECLARED_IDS ids;
// a team export of a million calls passes that, and ids of a shape strict mode takes (OTLP's
// hex span ids) were then taken in their own column.

/** Random hex of 24 digits (mulberry32): the shape of an id that default redaction takes where nothing declares it. */
function hexIds(count: number, seed: number): string[] {
  let x = seed >>> 0;
  const next = (): number => {
    x = (x + 0x6d2b79f5) >>> 0;
    let t = x;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
  return Array.from({ length: count }, () =>
    Array.from({ length: 24 }, () => '0123456789abcdef'[next() % 16]).join(''),
  );
}

describe('answerRedaction: the id columns past the bound on remembered ids', () => {
  it('leaves every id of three traces with more ids than the redactor remembers, and still takes hex in free text', async () => {
    const perTrace = Math.ceil((MAX_DECLARED_IDS * 1.1) / 3);
    const redactor = createRedactor();
    let taken = 0;
    let ids = 0;
    for (let trace = 0; trace < 3; trace++) {
      const own = hexIds(perTrace, trace + 1);
      const loose = `build ${hexIds(1, 100 + trace)[0]} failed`;
      const request: RedactionRequest = {
        tables: [{ distinct: [...own, loose], weights: [...own.map(() => 1), 1], ids: own.map((_, i) => i) }],
      };
      const [answer] = await answerRedaction(request, redactor);
      ids += own.length;
      // By hand: nothing but the loose value's hex changes; its slot is the last.
      assert.deepEqual(answer!.slots, [own.length], `trace ${trace}`);
      assert.equal(answer!.values[0], `build [REDACTED:strict-hex#${trace + 1}] failed`);
      taken += answer!.slots.length;
    }
    assert.ok(ids > MAX_DECLARED_IDS, `${ids} ids`);
    assert.equal(taken, 3);
    assert.deepEqual(Object.keys(redactor.summary().byKind), ['strict-hex']);
    assert.equal(redactor.summary().occurrences, 3);
  });
});
