import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pack, PlotRaster, unpack } from '../../../../webview/timeline/plotRaster';

// Small buffers whose every pixel is worked out by hand in the comments.

const RED = pack(255, 0, 0);
const BLUE = pack(0, 0, 255);

/** The buffer as rows of characters: '.' transparent, or the key of the colour found. */
function picture(r: PlotRaster, key: Record<string, number>): string[] {
  const rows: string[] = [];
  for (let y = 0; y < r.height; y++) {
    let row = '';
    for (let x = 0; x < r.width; x++) {
      const c = r.pixels[y * r.width + x]!;
      row += c === 0 ? '.' : (Object.entries(key).find(([, v]) => v === c)?.[0] ?? '?');
    }
    rows.push(row);
  }
  return rows;
}

describe('plot raster', () => {
  it('packs channels in ImageData byte order (R, G, B, A in memory)', () => {
    const bytes = new Uint8Array(new Uint32Array([pack(1, 2, 3, 4)]).buffer);
    assert.deepEqual([...bytes], [1, 2, 3, 4]);
    assert.deepEqual(unpack(pack(10, 20, 30)), [10, 20, 30, 255]);
  });

  it('fills rectangles rounded to whole pixels and clipped to the buffer, wide ones and narrow ones alike', () => {
    const r = new PlotRaster();
    r.reset(6, 4);
    // x 0.6..2.6 rounds to 1..3 (columns 1 and 2), y −3..1.5 to rows 0 and 1 (clipped at 0, 1.5 rounds to 2).
    r.fill(0.6, 2.6, -3, 1.5, RED);
    // Past the right edge: columns 4..5 of row 3.
    r.fill(4, 99, 3, 4, BLUE);
    assert.deepEqual(picture(r, { R: RED, B: BLUE }), ['.RR...', '.RR...', '......', '....BB']);
    // A 30-wide fill takes the row-copy path: the whole of row 2.
    const wide = new PlotRaster();
    wide.reset(30, 3);
    wide.fill(0, 30, 2, 3, RED);
    assert.equal(picture(wide, { R: RED })[2], 'R'.repeat(30));
    assert.equal(picture(wide, { R: RED })[1], '.'.repeat(30));
    // Reset clears.
    wide.reset(30, 3);
    assert.ok(wide.pixels.every((p) => p === 0));
  });

  it('repeats a tile from the canvas origin, not from the rectangle', () => {
    // A 2×2 checker, buffer placed at canvas (1, 0): buffer column 0 is canvas column 1.
    const tile = { width: 2, height: 2, pixels: Uint32Array.from([RED, BLUE, BLUE, RED]) };
    for (const [x0, x1] of [
      [0, 4],
      [0, 40],
    ]) {
      const r = new PlotRaster();
      r.reset(x1!, 2, 1, 0);
      r.fillTile(x0!, x1!, 0, 2, tile);
      // Canvas (1, 0) is tile (1, 0) = BLUE, canvas (2, 0) is tile (0, 0) = RED; the next row swaps.
      assert.equal(picture(r, { R: RED, B: BLUE })[0]!.slice(0, 4), 'BRBR');
      assert.equal(picture(r, { R: RED, B: BLUE })[1]!.slice(0, 4), 'RBRB');
    }
  });

  it('draws dashed vertical lines (on, then off, from the line top) and blends a translucent one over the pixels under it', () => {
    const r = new PlotRaster();
    r.reset(2, 7);
    r.vertical(0, 1, 0, 7, RED, 1, 2, 1);
    // Rows 0,1 on, 2 off, 3,4 on, 5 off, 6 on.
    assert.deepEqual(
      picture(r, { R: RED }).map((row) => row[0]),
      ['R', 'R', '.', 'R', 'R', '.', 'R'],
    );
    // Blue at 0.25 over opaque red: (255·0.75, 0, 255·0.25) = (191.25, 0, 63.75) → (191, 0, 64), opaque.
    r.fill(1, 2, 0, 1, RED);
    r.vertical(1, 2, 0, 2, BLUE, 0.25);
    assert.deepEqual(unpack(r.pixels[1]!), [191, 0, 64, 255]);
    // Over a transparent pixel: blue itself at alpha 0.25 (64 of 255), for the canvas to blend.
    assert.deepEqual(unpack(r.pixels[3]!), [0, 0, 255, 64]);
  });

  it('outlines a rectangle inside its edges', () => {
    const r = new PlotRaster();
    r.reset(4, 4);
    r.outline(0, 4, 0, 4, 1, RED);
    assert.deepEqual(picture(r, { R: RED }), ['RRRR', 'R..R', 'R..R', 'RRRR']);
  });

  it('rasterises a polyline one column per segment, so a translucent line is never blended twice', () => {
    const r = new PlotRaster();
    r.reset(7, 8);
    // Points (0.5, 1), (3.5, 1), (4.5, 6), a break, then (6.5, 2); 1 px thick (±0.5).
    // Segment 1 owns columns 0–2 (its end's column 3 starts the next): y 1 → rows round(0.5)..round(1.5) = row 1.
    // Segment 2 ends before the break, so it owns columns 3 and 4; it rises 5 rows per column:
    // column 3 (x 3.5–4): y 1–3.5 → rows round(0.5)..round(4) = 1–3; column 4 (x 4–4.5): y 3.5–6 → rows round(3)..round(6.5) = 3–6.
    // The lone point after the break draws nothing (as a canvas path's moveTo alone).
    const xs = [0.5, 3.5, 4.5, 5.5, 6.5];
    const ys = [1, 1, 6, Number.NaN, 2];
    r.polyline(xs, ys, 5, 1, BLUE, 1);
    assert.deepEqual(picture(r, { B: BLUE }), [
      '.......',
      'BBBB...',
      '...B...',
      '...BB..',
      '....B..',
      '....B..',
      '....B..',
      '.......',
    ]);
  });
});
