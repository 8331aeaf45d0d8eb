/** Params and result types of a request map (see WebviewRequests). */
type Params<R, M extends keyof R> = R[M] extends { params: infer P } ? P : never;
type Result<R, M extends keyof R> = R[M] extends { result: infer T } ? T : never;

/**
 * Timers exist in every runtime the channel runs in (extension host, webview, Node
 * tests), but the pure tsconfig has no DOM or Node typings, so they are reached
 * through `globalThis` with the two signatures used here.
 */
interface Timers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}
const timers = globalThis as unknown as Timers;

/** Default time a request waits for its response. */
export const REQUEST_TIMEOUT_MS = 15_000;

interface Pending {
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
  timer: unknown;
}

/**
 * One end of the host ↔ webview protocol. Only `post` is injected, so the same class
 * runs in the extension host, in the webview and in Node tests with two channels wired
 * back to back. Owns its pending requests: each resolves with its response, rejects
 * with the other side's `err`, or times out.
 *
 * SendN/RecvN: notifications this side sends/receives; SendR/RecvR: request maps.
 */
export class Channel<SendN extends { type: string }, RecvN extends { type: string }, SendR, RecvR> {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly handlers = new Map<string, (params: unknown) => unknown>();
  private notificationHandler: ((message: RecvN) => void) | null = null;

  constructor(
    private readonly post: (message: unknown) => void,
    private readonly options: { timeoutMs?: number; onError?: (message: string) => void } = {},
  ) {}

  /** Sends a notification; no answer is expected. */
  notify(message: SendN): void {
    this.post(message);
  }

  /** Sends a request and waits for its response (`timeoutMs` overrides the channel's wait, for answers that take long on big traces). */
  request<M extends keyof SendR & string>(method: M, params: Params<SendR, M>, options: { timeoutMs?: number } = {}): Promise<Result<SendR, M>> {
    const id = this.nextId++;
    return new Promise<Result<SendR, M>>((resolve, reject) => {
      const timeoutMs = options.timeoutMs ?? this.options.timeoutMs ?? REQUEST_TIMEOUT_MS;
      const timer = timers.setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`${method} got no answer within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject, timer });
      this.post({ type: method, id, params });
    });
  }

  /** Handles notifications from the other side. */
  onNotification(handler: (message: RecvN) => void): void {
    this.notificationHandler = handler;
  }

  /** Answers requests of one method. A thrown error is sent back as `err`. */
  onRequest<M extends keyof RecvR & string>(method: M, handler: (params: Params<RecvR, M>) => Result<RecvR, M> | Promise<Result<RecvR, M>>): void {
    this.handlers.set(method, handler as (params: unknown) => unknown);
  }

  /** Feeds a message that arrived from the other side. Malformed messages are reported, not thrown. */
  receive(data: unknown): void {
    if (typeof data !== 'object' || data === null || typeof (data as { type?: unknown }).type !== 'string') {
      this.options.onError?.('ignored a message without a string "type"');
      return;
    }
    const message = data as { type: string; id?: unknown; inReplyTo?: unknown; ok?: unknown; err?: unknown; params?: unknown };
    if (message.type === 'response') {
      this.settle(message);
      return;
    }
    if (message.id !== undefined) {
      // A request: its id comes back in the answer, so it must be a plain whole number.
      if (typeof message.id !== 'number' || !Number.isSafeInteger(message.id)) {
        this.options.onError?.(`ignored a request whose id is not a whole number (${typeof message.id})`);
        return;
      }
      void this.answer(message.type, message.id, message.params);
      return;
    }
    this.notificationHandler?.(data as RecvN);
  }

  /** Rejects every pending request; call when the webview goes away. */
  dispose(): void {
    for (const [id, p] of this.pending) {
      timers.clearTimeout(p.timer);
      p.reject(new Error('the channel was closed'));
      this.pending.delete(id);
    }
  }

  private settle(message: { inReplyTo?: unknown; ok?: unknown; err?: unknown }): void {
    const id = typeof message.inReplyTo === 'number' ? message.inReplyTo : -1;
    const p = this.pending.get(id);
    if (!p) {
      this.options.onError?.(`response to unknown or expired request ${String(message.inReplyTo)}`);
      return;
    }
    this.pending.delete(id);
    timers.clearTimeout(p.timer);
    if ('err' in message) p.reject(new Error(String(message.err)));
    else p.resolve(message.ok);
  }

  private async answer(method: string, id: number, params: unknown): Promise<void> {
    const handler = this.handlers.get(method);
    if (!handler) {
      this.options.onError?.(`no handler for request ${JSON.stringify(method.slice(0, 64))}`);
      this.post({ type: 'response', inReplyTo: id, err: `no handler for ${method.slice(0, 64)}` });
      return;
    }
    try {
      this.post({ type: 'response', inReplyTo: id, ok: await handler(params) });
    } catch (e) {
      this.post({ type: 'response', inReplyTo: id, err: e instanceof Error ? e.message : String(e) });
    }
  }
}
