/** Colours the chart paints with, resolved from the theme's CSS variables. */
export interface Palette {
  cached: string;
  appended: string;
  output: string;
  context: string;
  compaction: string;
  subagent: string;
  failed: string;
  /** Retry-loop bands. */
  loop: string;
  /** Cache-miss marks. */
  miss: string;
  selection: string;
  foreground: string;
  muted: string;
  grid: string;
  tooltipBackground: string;
  tooltipBorder: string;
  /** The editor's background, which charts are drawn on (to blend their colours once, opaque, instead of on every frame). */
  background: string;
  /** Bar outline; only high-contrast themes define --vscode-contrastBorder. */
  barBorder: string | null;
  fontFamily: string;
  highContrast: boolean;
}

/** Reads a CSS variable; empty when the theme does not define it. */
export type VariableReader = (name: string) => string;

/** Dark Modern defaults, for variables a theme (or a test page) leaves out. */
const FALLBACK: Record<string, string> = {
  '--vscode-charts-blue': '#3794ff',
  '--vscode-charts-orange': '#d18616',
  '--vscode-charts-green': '#89d185',
  '--vscode-charts-purple': '#b180d7',
  '--vscode-charts-yellow': '#cca700',
  '--vscode-charts-red': '#f14c4c',
  '--vscode-charts-foreground': '#cccccc',
  '--vscode-errorForeground': '#f85149',
  '--vscode-focusBorder': '#0078d4',
  '--vscode-foreground': '#cccccc',
  '--vscode-descriptionForeground': '#9d9d9d',
  '--vscode-editorWidget-border': '#454545',
  '--vscode-editorHoverWidget-background': '#202020',
  '--vscode-editorHoverWidget-border': '#454545',
  '--vscode-editor-background': '#1f1f1f',
  '--vscode-font-family': 'system-ui, sans-serif',
};

/** Builds the palette from theme variables; `highContrast` comes from the body class. */
export function buildPalette(read: VariableReader, highContrast: boolean): Palette {
  const v = (name: string, fallbackName?: string): string =>
    read(name).trim() ||
    (fallbackName ? read(fallbackName).trim() : '') ||
    FALLBACK[name] ||
    FALLBACK[fallbackName ?? ''] ||
    '';
  const contrastBorder = read('--vscode-contrastBorder').trim();
  return {
    cached: v('--vscode-charts-blue'),
    appended: v('--vscode-charts-orange'),
    output: v('--vscode-charts-green'),
    context: v('--vscode-charts-foreground', '--vscode-foreground'),
    compaction: v('--vscode-charts-yellow'),
    subagent: v('--vscode-charts-purple'),
    failed: v('--vscode-errorForeground'),
    loop: v('--vscode-charts-red', '--vscode-errorForeground'),
    miss: v('--vscode-charts-orange'),
    selection: v('--vscode-focusBorder'),
    foreground: v('--vscode-foreground'),
    muted: v('--vscode-descriptionForeground'),
    grid: v('--vscode-editorWidget-border', '--vscode-widget-border'),
    tooltipBackground: v('--vscode-editorHoverWidget-background', '--vscode-editorWidget-background'),
    tooltipBorder: v('--vscode-editorHoverWidget-border', '--vscode-editorWidget-border'),
    background: v('--vscode-editor-background'),
    barBorder: highContrast && contrastBorder ? contrastBorder : null,
    fontFamily: v('--vscode-font-family'),
    highContrast,
  };
}

/** True for VS Code's high-contrast body classes (dark and light). */
export function isHighContrast(bodyClass: string): boolean {
  return /\bvscode-high-contrast(-light)?\b/.test(bodyClass);
}

/**
 * A CSS colour with its alpha multiplied by `alpha`. Handles the hex and rgb()/rgba()
 * forms VS Code writes; other forms come back unchanged (opaque), which is safe.
 */
export function withAlpha(color: string, alpha: number): string {
  const c = color.trim();
  const hex = /^#([0-9a-f]{3,8})$/i.exec(c);
  if (hex) {
    let h = hex[1]!;
    if (h.length === 3 || h.length === 4) h = [...h].map((ch) => ch + ch).join('');
    if (h.length !== 6 && h.length !== 8) return c;
    const n = (i: number): number => parseInt(h.slice(i, i + 2), 16);
    const a = h.length === 8 ? n(6) / 255 : 1;
    return `rgba(${n(0)}, ${n(2)}, ${n(4)}, ${round(a * alpha)})`;
  }
  const rgb = /^rgba?\(\s*([\d.]+)[\s,]+([\d.]+)[\s,]+([\d.]+)(?:[\s,/]+([\d.]+%?))?\s*\)$/i.exec(c);
  if (rgb) {
    const raw = rgb[4];
    const a = raw === undefined ? 1 : raw.endsWith('%') ? parseFloat(raw) / 100 : parseFloat(raw);
    return `rgba(${rgb[1]}, ${rgb[2]}, ${rgb[3]}, ${round(a * alpha)})`;
  }
  return c;
}

/** A colour's red, green, blue (0–255) and alpha (0–1), from the hex and rgb()/rgba() forms; null for other forms. */
function channels(color: string): [number, number, number, number] | null {
  const parsed = withAlpha(color, 1);
  const m = /^rgba\((\d+(?:\.\d+)?), (\d+(?:\.\d+)?), (\d+(?:\.\d+)?), ([\d.]+)\)$/.exec(parsed);
  return m ? [Number(m[1]), Number(m[2]), Number(m[3]), Number(m[4])] : null;
}

/**
 * `color` at `alpha` over `background`, as one opaque colour: what a translucent fill
 * looks like on the chart's background, painted without blending (a canvas fills
 * opaque rectangles much faster). Falls back to the translucent colour when either
 * colour is in a form this cannot read.
 */
export function mixOver(color: string, alpha: number, background: string): string {
  const fg = channels(color);
  const bg = channels(background);
  if (!fg || !bg) return withAlpha(color, alpha);
  const a = fg[3] * alpha;
  const mix = (i: number): number => Math.round(fg[i]! * a + bg[i]! * (1 - a));
  return `rgb(${mix(0)}, ${mix(1)}, ${mix(2)})`;
}

function round(n: number): number {
  return Math.round(n * 1000) / 1000;
}

/** The look of every chart's tooltip: VS Code's hover widget. */
export function tooltipStyle(p: Palette): Record<string, unknown> {
  return {
    displayColors: false,
    backgroundColor: p.tooltipBackground,
    borderColor: p.tooltipBorder,
    borderWidth: 1,
    titleColor: p.foreground,
    bodyColor: p.foreground,
    padding: 8,
    cornerRadius: 3,
    caretSize: 5,
    titleFont: { weight: 'bold', size: 12 },
    bodyFont: { size: 12 },
  };
}

/** The look of a chart annotation's label (markers, the cliff): a small hover-coloured box edged in its line's colour. */
export function annotationLabelStyle(
  p: Palette,
  color: string,
): {
  backgroundColor: string;
  borderColor: string;
  borderWidth: number;
  borderRadius: number;
  color: string;
  font: { size: number };
  padding: { x: number; y: number };
} {
  return {
    backgroundColor: p.tooltipBackground,
    borderColor: color,
    borderWidth: 1,
    borderRadius: 2,
    color: p.foreground,
    font: { size: 10 },
    padding: { x: 4, y: 2 },
  };
}

/** Diagonal stripes as a repeating pattern: a square tile of `size` px with one stripe across its corners, so tiles join into continuous diagonals (one fill per shape instead of a line per stripe and a clip). */
export function diagonalHatch(
  ctx: CanvasRenderingContext2D,
  size: number,
  background: string,
  stripe: string,
): CanvasPattern | null {
  const tile = diagonalHatchTile(size, background, stripe);
  return tile ? ctx.createPattern(tile, 'repeat') : null;
}

/** The tile diagonalHatch repeats: `size` pixels square, the stripe corner to corner (the timeline reads its pixels). */
export function diagonalHatchTile(size: number, background: string, stripe: string): HTMLCanvasElement | null {
  const tile = document.createElement('canvas');
  tile.width = size;
  tile.height = size;
  const t = tile.getContext('2d');
  if (!t) return null;
  t.fillStyle = background;
  t.fillRect(0, 0, size, size);
  t.strokeStyle = stripe;
  t.lineWidth = 1;
  t.beginPath();
  t.moveTo(-1, size + 1);
  t.lineTo(size + 1, -1);
  t.stroke();
  return tile;
}
