import type { TimelineRestore } from '../timeline/timelinePanel';
import type { InspectorHost } from './inspectorHost';
import { mergeState } from './inspectorModel';
import type { PersistedState, TimelineViewState } from './inspectorModel';

/** Wait after the last zoom, pan or scroll before storing the view (a wheel zoom changes it every frame). */
const VIEW_STATE_DELAY_MS = 200;

/**
 * The view in the webview state: the timeline's window and filter and the page's scroll,
 * stored a moment after they stop changing, and put back once when the page is rebuilt
 * (VS Code rebuilds a hidden inspector when its tab comes back).
 */
export class ViewStore {
  /** The view stored before the page was rebuilt, put back when its session is drawn again. */
  private pending: { view: TimelineViewState | null; scrollY: number | null; asked: boolean } | null = null;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly host: InspectorHost,
    private readonly safely: (what: string, fn: () => void) => void,
    /** The session shown and its timeline's view now. */
    private readonly current: () => { sessionId: string | null; view: TimelineRestore | null },
  ) {}

  /** The trace arrived with this stored state; `asked`: the host asked for a call (it is brought into view, not the stored scroll). */
  expect(saved: PersistedState, asked: boolean): void {
    this.pending = { view: saved.view ?? null, scrollY: asked ? null : (saved.scrollY ?? null), asked };
  }

  /** No session to put a view back on. */
  forget(): void {
    this.pending = null;
  }

  /**
   * The stored view of this session, once (the page's scroll goes back after the paint);
   * `keepSelection`: the stored selection is shown where the stored window has it.
   */
  take(sessionId: string): { view: TimelineViewState | null; keepSelection: boolean } {
    const pending = this.pending;
    this.pending = null;
    const view = pending?.view && pending.view.sessionId === sessionId ? pending.view : null;
    if (pending?.scrollY) {
      const y = pending.scrollY;
      requestAnimationFrame(() => window.scrollTo(0, y));
    }
    return { view, keepSelection: view !== null && !pending!.asked };
  }

  /** The view moved: stored a moment after it stops, merged per key beside the selection and the panels' choices. */
  changed(): void {
    // Nothing to keep before the stored view was put back: the first paint would overwrite it.
    if (this.pending) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(
      () =>
        this.safely('keep the view', () => {
          const { sessionId, view } = this.current();
          this.host.setState(
            mergeState(this.host.getState(), {
              ...(sessionId !== null && view ? { view: { sessionId, ...view } } : {}),
              scrollY: Math.round(window.scrollY),
            }),
          );
        }),
      VIEW_STATE_DELAY_MS,
    );
  }
}
