import type { SessionBody, SessionIntro } from '../../src/core/view/traceService';
import type { CallRow } from '../../src/core/view/traceView';
import { RowCache } from '../shared/rowCache';
import { BODY_TIMEOUT_MS } from './inspectorHost';
import type { InspectorHost } from './inspectorHost';

/** Call rows fetched at once; a session up to this size gets all its rows with its body. */
const ROW_PAGE = 2000;

/** What the page does with a session's answers as they come. */
export interface SessionAnswers {
  /** Its summary (sent by the host with `init`, or asked for). */
  intro(intro: SessionIntro): void;
  /** Its analyses and timeline columns. */
  body(intro: SessionIntro, body: SessionBody): void;
  /** The summary could not be had (a saved session no longer in the file). */
  introFailed(error: unknown): void;
  bodyFailed(error: unknown): void;
}

/**
 * Asks the host for a session: its summary, then its body, and its call rows by page
 * (all of them with the body, up to ROW_PAGE). Answers for a session opened before the
 * last one are dropped.
 */
export class SessionLoader {
  private generation = 0;
  /** The call rows of the session opened last (null before the first). */
  rows: RowCache<CallRow> | null = null;

  constructor(
    private readonly host: InspectorHost,
    private readonly safely: (what: string, fn: () => void) => void,
    private readonly rowsArrived: () => void,
    private readonly reportError: (what: string, error: unknown) => void,
  ) {}

  /** Opens session `id` (`intro`: its summary, when the host sent it). */
  open(id: string, intro: SessionIntro | null, answers: SessionAnswers): void {
    const generation = ++this.generation;
    const current = (): boolean => generation === this.generation;
    this.rows = new RowCache(
      (from, count) => this.host.request('callRows', { sessionId: id, from, count }),
      ROW_PAGE,
      () => this.safely('show call rows', () => this.rowsArrived()),
      (e) => this.reportError('load call rows', e),
    );
    const withIntro = (it: SessionIntro): void => {
      if (!current()) return;
      answers.intro(it);
      this.host.request('sessionBody', { sessionId: id }, { timeoutMs: BODY_TIMEOUT_MS }).then(
        (body) =>
          this.safely('show the session', () => {
            if (!current()) return;
            const n = body.columns.flags.length;
            if (n <= ROW_PAGE) this.rows?.ensure(0, n - 1);
            answers.body(it, body);
          }),
        (e: unknown) => {
          if (current()) answers.bodyFailed(e);
        },
      );
    };
    if (intro) withIntro(intro);
    else {
      this.host.request('sessionIntro', { sessionId: id }).then(
        (it) => this.safely('show the session', () => withIntro(it)),
        (e: unknown) => {
          if (current()) answers.introFailed(e);
        },
      );
    }
  }
}
