import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  centerOn,
  clampWindow,
  ensureVisible,
  fitAll,
  MIN_SPAN,
  pageBy,
  panBy,
  showsAll,
  visibleSlots,
  windowAround,
  zoomAround,
} from '../../../../webview/timeline/viewWindow';

// Worked by hand: slot p covers [p, p + 1), a window [lo, hi) shows hi − lo slots.

describe('timeline window: zoom and pan', () => {
  it('fit all shows every slot; a window never leaves [0, count) and never shows fewer than 10 slots', () => {
    assert.deepEqual(fitAll(9089), { lo: 0, hi: 9089 });
    assert.deepEqual(clampWindow({ lo: -50, hi: 50 }, 9089), { lo: 0, hi: 100 });
    assert.deepEqual(clampWindow({ lo: 9000, hi: 9200 }, 9089), { lo: 8889, hi: 9089 });
    // A 4-slot window around 500 widens to 10 around the same middle (502).
    assert.deepEqual(clampWindow({ lo: 500, hi: 504 }, 9089), { lo: 497, hi: 507 });
    assert.deepEqual(clampWindow({ lo: 2, hi: 4 }, 3), { lo: 0, hi: 3 });
    assert.equal(MIN_SPAN, 10);
  });

  it('zoom keeps the slot under the pointer where it is', () => {
    // 1,000 slots, zoom ×2 at slot 250 (a quarter in): 500 slots, still a quarter in → [125, 625).
    assert.deepEqual(zoomAround({ lo: 0, hi: 1000 }, 2, 250, 1000), { lo: 125, hi: 625 });
    // Zoom out ×2 from [125, 625) at the same anchor goes back.
    assert.deepEqual(zoomAround({ lo: 125, hi: 625 }, 0.5, 250, 1000), { lo: 0, hi: 1000 });
    // Zooming out past all stops at all; in past 10 stops at 10.
    assert.deepEqual(zoomAround({ lo: 0, hi: 1000 }, 0.1, 500, 1000), { lo: 0, hi: 1000 });
    assert.deepEqual(zoomAround({ lo: 100, hi: 120 }, 100, 110, 1000), { lo: 105, hi: 115 });
  });

  it('pan moves by slots and stops at the ends; a page is nine tenths of the span', () => {
    assert.deepEqual(panBy({ lo: 100, hi: 200 }, 30, 1000), { lo: 130, hi: 230 });
    assert.deepEqual(panBy({ lo: 100, hi: 200 }, -500, 1000), { lo: 0, hi: 100 });
    assert.deepEqual(pageBy({ lo: 100, hi: 200 }, 1, 1000), { lo: 190, hi: 290 });
    assert.deepEqual(pageBy({ lo: 100, hi: 200 }, -1, 1000), { lo: 10, hi: 110 });
    assert.deepEqual(pageBy({ lo: 950, hi: 1000 }, 1, 1000), { lo: 950, hi: 1000 });
  });

  it('centres on a slot, brings a slot into view with a slot of margin, and frames a run', () => {
    assert.deepEqual(centerOn({ lo: 0, hi: 100 }, 500, 1000), { lo: 450.5, hi: 550.5 });
    assert.deepEqual(ensureVisible({ lo: 100, hi: 200 }, 150, 1000), { lo: 100, hi: 200 });
    assert.deepEqual(ensureVisible({ lo: 100, hi: 200 }, 250, 1000), { lo: 152, hi: 252 });
    assert.deepEqual(ensureVisible({ lo: 100, hi: 200 }, 20, 1000), { lo: 19, hi: 119 });
    // Slots 100–149 (50 slots) with 10 % room each side: [95, 155).
    assert.deepEqual(windowAround(100, 149, 1000), { lo: 95, hi: 155 });
  });

  it('says which slots a window touches and whether it shows all', () => {
    assert.deepEqual(visibleSlots({ lo: 10.5, hi: 20.2 }, 1000), { first: 10, end: 21 });
    assert.deepEqual(visibleSlots({ lo: 990, hi: 1000 }, 1000), { first: 990, end: 1000 });
    assert.equal(showsAll({ lo: 0, hi: 1000 }, 1000), true);
    assert.equal(showsAll({ lo: 0, hi: 999 }, 1000), false);
  });
});
