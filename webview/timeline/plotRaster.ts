// The timeline's plot as a pixel buffer. Without a GPU, Chromium records every canvas
// drawing call and rasterises the recording in software when the frame is committed, on the
// page's main thread: a zoomed-out million-call view is thousands of anti-aliased
// rectangles (bins of four stacked parts), hatched bands, dashed marker lines and a
// 700-vertex context line, which took 15–20 ms of commit per frame, growing with how many
// calls, loops and markers the window spans. Written here into one buffer instead and
// drawn with one putImageData + drawImage, the commit copies a fixed number of pixels,
// whatever the window holds. Pure (no DOM): the page hands it packed colours and pixel
// coordinates; unit-tested in Node.

/** A colour as the buffer stores it: the bytes R, G, B, A in memory order (ImageData's layout). */
export type Packed = number;

const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/** Packs 0–255 channels into one pixel of a Uint32Array view on RGBA bytes. */
export function pack(r: number, g: number, b: number, a = 255): Packed {
  return LITTLE_ENDIAN ? ((a << 24) | (b << 16) | (g << 8) | r) >>> 0 : ((r << 24) | (g << 16) | (b << 8) | a) >>> 0;
}

/** The channels of a packed pixel: [r, g, b, a]. */
export function unpack(c: Packed): [number, number, number, number] {
  return LITTLE_ENDIAN
    ? [c & 255, (c >>> 8) & 255, (c >>> 16) & 255, c >>> 24]
    : [c >>> 24, (c >>> 16) & 255, (c >>> 8) & 255, c & 255];
}

/** (r, g, b) at `alpha` over a pixel that is not opaque: source over, unpremultiplied (the under pixel weighs by its own alpha). */
function blendOver(under: Packed, r: number, g: number, b: number, alpha: number): Packed {
  const [ur, ug, ub, ua] = unpack(under);
  if (ua === 0) return pack(r, g, b, Math.round(alpha * 255));
  const underAlpha = ua / 255;
  const out = alpha + underAlpha * (1 - alpha);
  const mix = (s: number, d: number): number => Math.round((s * alpha + d * underAlpha * (1 - alpha)) / out);
  return pack(mix(r, ur), mix(g, ug), mix(b, ub), Math.round(out * 255));
}

/** A repeating tile (the loop hatching), anchored at the canvas origin. */
export interface Tile {
  width: number;
  height: number;
  pixels: Uint32Array;
}

/** A pixel buffer the size of the plot, rows top to bottom; (0, 0) is the plot's top left device pixel. */
export class PlotRaster {
  width = 0;
  height = 0;
  /** One packed pixel per element (see `pack`); transparent where nothing is painted. */
  pixels = new Uint32Array(0);
  /** Canvas device pixels left of and above the buffer: where tiles are anchored. */
  originX = 0;
  originY = 0;

  /** Clears to transparent, resizing when the plot changed size. */
  reset(width: number, height: number, originX = 0, originY = 0): void {
    const w = Math.max(0, Math.floor(width));
    const h = Math.max(0, Math.floor(height));
    if (w !== this.width || h !== this.height) {
      this.width = w;
      this.height = h;
      this.pixels = new Uint32Array(w * h);
    } else this.pixels.fill(0);
    this.originX = originX;
    this.originY = originY;
  }

  /** Fills [x0, x1) × [y0, y1) (clipped to the buffer) with an opaque colour. */
  fill(x0: number, x1: number, y0: number, y1: number, color: Packed): void {
    const r = this.clip(x0, x1, y0, y1);
    if (!r) return;
    const p = this.pixels;
    const w = this.width;
    const [a, b, top, bottom] = r;
    if (b - a > 16) {
      for (let y = top; y < bottom; y++) p.fill(color, y * w + a, y * w + b);
      return;
    }
    for (let row = top * w; row < bottom * w; row += w) for (let i = row + a; i < row + b; i++) p[i] = color;
  }

  /** Fills [x0, x1) × [y0, y1) with a tile repeated from the canvas origin. */
  fillTile(x0: number, x1: number, y0: number, y1: number, tile: Tile): void {
    const r = this.clip(x0, x1, y0, y1);
    if (!r || tile.width <= 0 || tile.height <= 0) return;
    // Copied from the whole buffer tiled once (per size, origin and tile): a copy per pixel, no modulo.
    const tiled = this.tiledWith(tile);
    const p = this.pixels;
    const w = this.width;
    const [a, b, top, bottom] = r;
    if (b - a > 16) {
      for (let y = top; y < bottom; y++) p.set(tiled.subarray(y * w + a, y * w + b), y * w + a);
      return;
    }
    for (let row = top * w; row < bottom * w; row += w) for (let i = row + a; i < row + b; i++) p[i] = tiled[i]!;
  }

  private tiled: { tile: Tile; key: string; pixels: Uint32Array } | null = null;

  private tiledWith(tile: Tile): Uint32Array {
    const key = `${this.width}x${this.height}@${this.originX},${this.originY}`;
    if (this.tiled && this.tiled.tile === tile && this.tiled.key === key) return this.tiled.pixels;
    const out = new Uint32Array(this.width * this.height);
    for (let y = 0; y < this.height; y++) {
      const tileRow = ((y + this.originY) % tile.height) * tile.width;
      for (let x = 0; x < this.width; x++)
        out[y * this.width + x] = tile.pixels[tileRow + ((x + this.originX) % tile.width)]!;
    }
    this.tiled = { tile, key, pixels: out };
    return out;
  }

  /**
   * A vertical line [x0, x1) from y0 to y1, dashed `on` pixels then `off` from y0 (solid
   * when off is 0), in `color` at `alpha` over what is there.
   */
  vertical(x0: number, x1: number, y0: number, y1: number, color: Packed, alpha = 1, on = 1, off = 0): void {
    const r = this.clip(x0, x1, y0, y1);
    if (!r) return;
    const [a, b, top, bottom] = r;
    const period = on + off;
    const start = Math.round(y0);
    const p = this.pixels;
    const [sr, sg, sb] = unpack(color);
    const keep = 1 - alpha;
    for (let y = top; y < bottom; y++) {
      if (off > 0 && (y - start) % period >= on) continue;
      const row = y * this.width;
      for (let i = row + a; i < row + b; i++) {
        if (alpha >= 1) {
          p[i] = color;
          continue;
        }
        const under = p[i]!;
        if (LITTLE_ENDIAN && under >>> 24 === 255) {
          // Over an opaque pixel (the usual case: bands and bars are opaque), channel by channel.
          const red = (sr * alpha + (under & 255) * keep + 0.5) | 0;
          const green = (sg * alpha + ((under >>> 8) & 255) * keep + 0.5) | 0;
          const blue = (sb * alpha + ((under >>> 16) & 255) * keep + 0.5) | 0;
          p[i] = (0xff000000 | (blue << 16) | (green << 8) | red) >>> 0;
        } else p[i] = blendOver(under, sr, sg, sb, alpha);
      }
    }
  }

  /** The outline (one `thickness` ring inside) of [x0, x1) × [y0, y1). */
  outline(x0: number, x1: number, y0: number, y1: number, thickness: number, color: Packed): void {
    const t = Math.max(1, Math.round(thickness));
    this.fill(x0, x1, y0, Math.min(y1, y0 + t), color);
    this.fill(x0, x1, Math.max(y0, y1 - t), y1, color);
    this.fill(x0, Math.min(x1, x0 + t), y0, y1, color);
    this.fill(Math.max(x0, x1 - t), x1, y0, y1, color);
  }

  /**
   * A polyline through (xs[i], ys[i]) (x ascending; NaN y breaks it), `width` pixels thick,
   * in `color` at `alpha` over what is there. Pixel column c spans x in [c, c + 1). Each
   * column belongs to one segment (from its start point's column up to, not including, its
   * end point's, which the next segment starts in; the last segment before a break or the
   * end keeps its end column), so no pixel is blended twice where segments meet. A column
   * paints the y range its segment crosses in it, widened by half the thickness each way.
   */
  polyline(
    xs: ArrayLike<number>,
    ys: ArrayLike<number>,
    count: number,
    width: number,
    color: Packed,
    alpha: number,
  ): void {
    const half = width / 2;
    for (let i = 0; i + 1 < count; i++) {
      const xa = xs[i]!;
      const ya = ys[i]!;
      const xb = xs[i + 1]!;
      const yb = ys[i + 1]!;
      if (Number.isNaN(ya) || Number.isNaN(yb)) continue;
      const ends = i + 2 >= count || Number.isNaN(ys[i + 2]!);
      const c0 = Math.max(0, Math.floor(xa));
      const c1 = Math.min(this.width, Math.floor(xb) + (ends ? 1 : 0));
      const slope = xb > xa ? (yb - ya) / (xb - xa) : 0;
      for (let c = c0; c < c1; c++) {
        const left = Math.min(xb, Math.max(xa, c));
        const right = Math.min(xb, Math.max(xa, c + 1));
        const y1 = ya + slope * (left - xa);
        const y2 = xb > xa ? ya + slope * (right - xa) : yb;
        const lo = Math.round(Math.min(y1, y2) - half);
        const hi = Math.max(lo + 1, Math.round(Math.max(y1, y2) + half));
        this.vertical(c, c + 1, lo, hi, color, alpha);
      }
    }
  }

  /** [x0, x1) × [y0, y1) rounded to whole pixels and clipped, or null when empty. */
  private clip(x0: number, x1: number, y0: number, y1: number): [number, number, number, number] | null {
    const a = Math.max(0, Math.round(x0));
    const b = Math.min(this.width, Math.round(x1));
    const top = Math.max(0, Math.round(y0));
    const bottom = Math.min(this.height, Math.round(y1));
    return a < b && top < bottom ? [a, b, top, bottom] : null;
  }
}
