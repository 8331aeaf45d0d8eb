/**
 * Keeps what the user looks at in place while appended calls are painted: the first
 * section still in view stays at the same height on screen, whatever grew or shrank above
 * it (the browser's own scroll anchoring is off meanwhile, so the two do not both correct).
 */
export class ScrollAnchor {
  private anchor: { element: HTMLElement; top: number } | null = null;

  /** Notes the first of `sections` (top to bottom) still in view, and where it is. */
  hold(sections: readonly HTMLElement[]): void {
    for (const element of sections) {
      if (element.hidden) continue;
      const rect = element.getBoundingClientRect();
      if (rect.bottom <= 0) continue;
      this.anchor = { element, top: rect.top };
      document.documentElement.style.overflowAnchor = 'none';
      return;
    }
  }

  /** Puts the held section back where it was on screen; `done`: the appended calls are all painted. */
  restore(done: boolean): void {
    const anchor = this.anchor;
    if (!anchor) return;
    const delta = anchor.element.getBoundingClientRect().top - anchor.top;
    if (Math.abs(delta) >= 1) window.scrollBy(0, delta);
    if (!done) return;
    this.anchor = null;
    document.documentElement.style.overflowAnchor = '';
  }
}
