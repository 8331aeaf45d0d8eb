import {
  elementScroll,
  measureElement,
  observeElementOffset,
  observeElementRect,
  Virtualizer,
} from '@tanstack/virtual-core';
import { el } from './dom';

/** How a virtual table draws its items. */
export interface VirtualTableOptions {
  className: string;
  caption: string;
  /** The header row (sticky). */
  head: HTMLTableRowElement;
  /** Columns, for the spacer cells. */
  columns: number;
  /** Expected height of an item in pixels (measured once drawn). */
  estimateHeight: number;
  /**
   * Items are rows (`tr`, in one tbody) or groups of rows (`tbody` each, like a loop and its
   * error line). The element for item `index`; drawn only while it is in view.
   */
  kind: 'rows' | 'bodies';
  render(index: number): HTMLTableRowElement | HTMLTableSectionElement;
  /** The items in view changed (for fetching their rows); inclusive range. */
  onRange?(first: number, last: number): void;
}

/**
 * A native `<table>` of any length in a scroll container: only the items in view (plus a
 * few) are in the DOM, between two spacers that keep the scroll height, with
 * @tanstack/virtual-core working out which. Rows keep `aria-rowindex` and the table
 * `aria-rowcount`, so screen readers count the whole table. Owns its DOM.
 */
export class VirtualTable {
  readonly element: HTMLDivElement;
  private readonly table: HTMLTableElement;
  private readonly host: HTMLElement;
  private readonly top: HTMLElement;
  private readonly bottom: HTMLElement;
  private readonly virtualizer: Virtualizer<HTMLDivElement, Element>;
  private cleanup: (() => void) | null = null;
  private count = 0;
  private lastRange = '';
  private drawing = false;
  private again = 0;
  /** The elements drawn, by item index. */
  private drawn = new Map<number, HTMLElement>();

  constructor(private readonly options: VirtualTableOptions) {
    this.element = el('div', { className: `virtual-scroll ${options.className}-scroll` });
    const spacer = (): HTMLTableRowElement => {
      const tr = el('tr', { className: 'virtual-spacer', attrs: { 'aria-hidden': 'true' } }, [
        el('td', { attrs: { colspan: String(options.columns) } }),
      ]);
      return tr;
    };
    const topRow = spacer();
    const bottomRow = spacer();
    if (options.kind === 'rows') {
      this.host = el('tbody', { className: 'virtual-body' });
      this.top = topRow;
      this.bottom = bottomRow;
      this.table = el('table', { className: `data-table ${options.className}` }, [
        el('caption', { className: 'visually-hidden', text: options.caption }),
        el('thead', {}, [options.head]),
        this.host,
      ]);
    } else {
      this.top = el('tbody', { className: 'virtual-spacer-body', attrs: { 'aria-hidden': 'true' } }, [topRow]);
      this.bottom = el('tbody', { className: 'virtual-spacer-body', attrs: { 'aria-hidden': 'true' } }, [bottomRow]);
      this.table = el('table', { className: `data-table ${options.className}` }, [
        el('caption', { className: 'visually-hidden', text: options.caption }),
        el('thead', {}, [options.head]),
      ]);
      this.host = this.table;
    }
    this.element.appendChild(this.table);
    this.virtualizer = new Virtualizer<HTMLDivElement, Element>({
      count: 0,
      getScrollElement: () => this.element,
      estimateSize: () => options.estimateHeight,
      overscan: 8,
      scrollToFn: elementScroll,
      observeElementRect,
      observeElementOffset,
      measureElement,
      // A table fills in before layout settles: a first guess of the viewport draws the first screen at once.
      initialRect: { width: 600, height: 480 },
      onChange: () => this.changed(),
    });
  }

  /** Starts observing (call once the element is in the page). */
  mount(): void {
    if (this.cleanup) return;
    this.cleanup = this.virtualizer._didMount();
    this.virtualizer._willUpdate();
    this.draw();
  }

  /**
   * Sets how many items there are and redraws. `keepMeasures`: the items before are the
   * same ones (more were appended), so their measured heights stay and the scroll does not
   * move as they are measured again.
   */
  setCount(count: number, options: { keepMeasures?: boolean } = {}): void {
    this.count = count;
    for (const node of this.drawn.values()) node.remove();
    this.drawn.clear();
    this.table.setAttribute('aria-rowcount', String(count + 1));
    this.virtualizer.setOptions({ ...this.virtualizer.options, count });
    if (!options.keepMeasures) this.virtualizer.measure();
    this.virtualizer._willUpdate();
    this.draw();
  }

  /** Redraws the items in view (their data changed). */
  refresh(): void {
    for (const node of this.drawn.values()) node.remove();
    this.drawn.clear();
    this.draw();
  }

  /** Scrolls item `index` into the middle of the view. */
  scrollTo(index: number): void {
    if (index < 0 || index >= this.count) return;
    this.virtualizer.scrollToIndex(index, { align: 'center' });
    this.draw();
  }

  /** The element drawn for item `index`, if it is in view. */
  itemElement(index: number): HTMLElement | null {
    return this.host.querySelector<HTMLElement>(`:scope > [data-index="${index}"], :scope > tr[data-index="${index}"]`);
  }

  dispose(): void {
    cancelAnimationFrame(this.again);
    this.cleanup?.();
    this.cleanup = null;
  }

  /** The virtualizer moved or measured: redraw, later if a draw (which measures) is under way. */
  private changed(): void {
    if (!this.drawing) {
      this.draw();
      return;
    }
    if (!this.again) {
      this.again = requestAnimationFrame(() => {
        this.again = 0;
        this.draw();
      });
    }
  }

  private draw(): void {
    this.drawing = true;
    try {
      this.drawItems();
    } finally {
      this.drawing = false;
    }
  }

  private drawItems(): void {
    const items = this.virtualizer.getVirtualItems();
    const total = this.virtualizer.getTotalSize();
    const before = items[0]?.start ?? 0;
    const after = Math.max(0, total - (items[items.length - 1]?.end ?? 0));
    (this.top instanceof HTMLTableRowElement ? this.top : (this.top.firstElementChild as HTMLElement)).style.height =
      `${before}px`;
    (this.bottom instanceof HTMLTableRowElement
      ? this.bottom
      : (this.bottom.firstElementChild as HTMLElement)
    ).style.height = `${after}px`;
    // Items still in view keep their element (and so the keyboard focus inside it); new ones are drawn, gone ones removed.
    const next = new Map<number, HTMLElement>();
    for (const item of items) {
      let node = this.drawn.get(item.index);
      if (!node) {
        node = this.options.render(item.index);
        node.dataset['index'] = String(item.index);
        if (node instanceof HTMLTableRowElement) node.setAttribute('aria-rowindex', String(item.index + 2));
      }
      next.set(item.index, node);
    }
    for (const [index, node] of this.drawn) if (next.get(index) !== node) node.remove();
    if (this.top.parentNode !== this.host) this.host.appendChild(this.top);
    let cursor: Element = this.top;
    for (const item of items) {
      const node = next.get(item.index)!;
      if (cursor.nextElementSibling !== node) cursor.after(node);
      cursor = node;
    }
    if (cursor.nextElementSibling !== this.bottom) cursor.after(this.bottom);
    for (const item of items) {
      const node = next.get(item.index)!;
      if (!this.drawn.has(item.index) || this.drawn.get(item.index) !== node) this.virtualizer.measureElement(node);
    }
    this.drawn = next;
    this.element.dataset['rendered'] = String(items.length);
    if (items.length > 0 && this.options.onRange) {
      const range = `${items[0]!.index}-${items[items.length - 1]!.index}`;
      if (range !== this.lastRange) {
        this.lastRange = range;
        this.options.onRange(items[0]!.index, items[items.length - 1]!.index);
      }
    }
  }
}
