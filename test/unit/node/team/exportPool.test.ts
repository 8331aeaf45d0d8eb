import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EXPORT_THREADS_VARIABLE, exportThreadsFor, threadForNextJob } from '../../../../src/node/team/exportPool';

describe('exportThreadsFor: how many export threads', () => {
  it('one per core, at most 4, from two traces on; none for one trace or one core', () => {
    assert.equal(exportThreadsFor(1000, {}, 2, 0.3), 2);
    assert.equal(exportThreadsFor(1000, {}, 8, 0.3), 4);
    assert.equal(exportThreadsFor(3, {}, 8, 0.3), 3);
    assert.equal(exportThreadsFor(1, {}, 8, 0.3), 0);
    assert.equal(exportThreadsFor(1000, {}, 1, 0.3), 0);
  });

  it('two on a saturated machine (load average at or over the cores)', () => {
    assert.equal(exportThreadsFor(1000, {}, 2, 2), 2);
    assert.equal(exportThreadsFor(1000, {}, 8, 9.5), 2);
  });

  it(`${EXPORT_THREADS_VARIABLE} sets it (0: the CLI's own thread), capped at 16; a value that is not a number is ignored`, () => {
    assert.equal(exportThreadsFor(1000, { [EXPORT_THREADS_VARIABLE]: '0' }, 8, 0.3), 0);
    assert.equal(exportThreadsFor(1, { [EXPORT_THREADS_VARIABLE]: '3' }, 8, 9), 3);
    assert.equal(exportThreadsFor(1000, { [EXPORT_THREADS_VARIABLE]: '64' }, 8, 0.3), 16);
    assert.equal(exportThreadsFor(1000, { [EXPORT_THREADS_VARIABLE]: 'many' }, 8, 0.3), 4);
  });
});

describe('threadForNextJob: which export thread takes the next source', () => {
  it('the thread with nothing left to parse, though it holds more sources waiting for their redaction', () => {
    // Thread 0 parses one large source; thread 1's three sources all wait behind it for the redactor.
    assert.equal(
      threadForNextJob([
        { unparsed: 1, inFlight: 1 },
        { unparsed: 0, inFlight: 3 },
      ]),
      1,
    );
  });

  it('with as much to parse on each, the one with fewer sources in flight; with both equal, the first', () => {
    assert.equal(
      threadForNextJob([
        { unparsed: 1, inFlight: 4 },
        { unparsed: 1, inFlight: 2 },
        { unparsed: 2, inFlight: 0 },
      ]),
      1,
    );
    assert.equal(
      threadForNextJob([
        { unparsed: 0, inFlight: 1 },
        { unparsed: 0, inFlight: 1 },
      ]),
      0,
    );
  });
});
