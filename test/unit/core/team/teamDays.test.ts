import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { dayWriter, utcDay } from '../../../../src/core/team/teamRows';

const DAY = 86_400_000;

describe("the team rows' days (dayWriter remembers a day it has written)", () => {
  it('gives the UTC day of each time on either side of midnight, in any order, as a new Date would', () => {
    // Hand-worked: 0 is 1970-01-01T00:00Z; a day is 86,400,000 ms; 1,700,000,000,000 ms is 2023-11-14T22:13:20Z.
    const cases: Array<[number, string]> = [
      [0, '1970-01-01'],
      [DAY - 1, '1970-01-01'],
      // Date truncates a fractional time: the last fraction of a millisecond stays in its day.
      [DAY - 0.5, '1970-01-01'],
      [DAY - 1e-7, '1970-01-01'],
      [DAY, '1970-01-02'],
      [-1, '1969-12-31'],
      [-DAY, '1969-12-31'],
      [-DAY - 1, '1969-12-30'],
      [1_700_000_000_000, '2023-11-14'],
      [1_700_000_000_000 + 2 * 3_600_000, '2023-11-15'],
    ];
    // Forwards, backwards and again on one writer: a remembered day must not answer for a neighbour.
    const day = dayWriter();
    for (const order of [cases, [...cases].reverse(), cases])
      for (const [ms, expected] of order) assert.equal(day(ms), expected, String(ms));
    for (const [ms, expected] of cases) assert.equal(utcDay(ms), expected, String(ms));
  });

  it('no day for no time or a time that is not finite', () => {
    const day = dayWriter();
    assert.equal(day(null), null);
    assert.equal(day(Number.NaN), null);
    assert.equal(day(Number.POSITIVE_INFINITY), null);
  });
});
