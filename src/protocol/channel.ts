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
  /** Typed arrays of the answer that came ahead of it (see `partBytes`). */
  parts?: Map<number, ArrayBufferView>;
}

/** What stands for a typed array that travelled in its own `response/part` message. */
interface PartRef {
  $responsePart: number;
}

/** Most typed arrays one answer may send apart, and how deep its value is searched for them (both ways). */
const MAX_PARTS = 64;
const MAX_PART_DEPTH = 8;

function isPartRef(value: unknown): value is PartRef {
  return (
    typeof value === 'object' &&
    value !== null &&
    Object.keys(value).length === 1 &&
    Number.isSafeInteger((value as Partial<PartRef>).$responsePart)
  );
}

/**
 * The answer with each typed array of at least `minBytes` (searched in plain objects and
 * arrays, not deeper than MAX_PART_DEPTH) replaced by a PartRef, and those arrays in
 * order; the answer itself is not changed (objects on the way are copied).
 */
function splitParts(value: unknown, minBytes: number): { value: unknown; parts: ArrayBufferView[] } {
  const parts: ArrayBufferView[] = [];
  const walk = (v: unknown, depth: number): unknown => {
    if (typeof v !== 'object' || v === null) return v;
    if (ArrayBuffer.isView(v)) {
      if (v.byteLength < minBytes || parts.length >= MAX_PARTS) return v;
      parts.push(v);
      return { $responsePart: parts.length - 1 } satisfies PartRef;
    }
    if (depth >= MAX_PART_DEPTH) return v;
    if (Array.isArray(v)) {
      let copy: unknown[] | null = null;
      v.forEach((item, i) => {
        const w = walk(item, depth + 1);
        if (w !== item) (copy ??= [...v])[i] = w;
      });
      return copy ?? v;
    }
    if (Object.getPrototypeOf(v) !== Object.prototype) return v;
    let copy: Record<string, unknown> | null = null;
    for (const [k, item] of Object.entries(v)) {
      const w = walk(item, depth + 1);
      if (w !== item) (copy ??= { ...(v as Record<string, unknown>) })[k] = w;
    }
    return copy ?? v;
  };
  return { value: walk(value, 0), parts };
}

/** The answer with its PartRefs replaced by the typed arrays that came for them; null when one is missing. */
function joinParts(value: unknown, parts: Map<number, ArrayBufferView>): { value: unknown } | null {
  let missing = false;
  const walk = (v: unknown, depth: number): unknown => {
    if (typeof v !== 'object' || v === null || ArrayBuffer.isView(v)) return v;
    if (isPartRef(v)) {
      const part = parts.get(v.$responsePart);
      if (part === undefined) missing = true;
      return part;
    }
    if (depth >= MAX_PART_DEPTH) return v;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) v[i] = walk(v[i], depth + 1);
      return v;
    }
    for (const [k, item] of Object.entries(v)) (v as Record<string, unknown>)[k] = walk(item, depth + 1);
    return v;
  };
  const joined = walk(value, 0);
  return missing ? null : { value: joined };
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

  /**
   * `post` may return a promise of the message's delivery (the host's `webview.postMessage`
   * does). With `partBytes`, an answer's typed arrays of that size or more are posted one
   * by one ahead of it, each after the last was delivered, then the answer without them:
   * VS Code serialises a webview message whole and holds several copies of it until it is
   * delivered (a million calls' timeline columns, 58 MB, cost the extension host ~230 MiB
   * at once), so a big answer costs a few copies of its largest array instead.
   */
  constructor(
    private readonly post: (message: unknown) => unknown,
    private readonly options: { timeoutMs?: number; onError?: (message: string) => void; partBytes?: number } = {},
  ) {}

  /** Sends a notification; no answer is expected. */
  notify(message: SendN): void {
    this.post(message);
  }

  /** Sends a request and waits for its response (`timeoutMs` overrides the channel's wait, for answers that take long on big traces). */
  request<M extends keyof SendR & string>(
    method: M,
    params: Params<SendR, M>,
    options: { timeoutMs?: number } = {},
  ): Promise<Result<SendR, M>> {
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
  onRequest<M extends keyof RecvR & string>(
    method: M,
    handler: (params: Params<RecvR, M>) => Result<RecvR, M> | Promise<Result<RecvR, M>>,
  ): void {
    this.handlers.set(method, handler as (params: unknown) => unknown);
  }

  /** Feeds a message that arrived from the other side. Malformed messages are reported, not thrown. */
  receive(data: unknown): void {
    if (typeof data !== 'object' || data === null || typeof (data as { type?: unknown }).type !== 'string') {
      this.options.onError?.('ignored a message without a string "type"');
      return;
    }
    const message = data as {
      type: string;
      id?: unknown;
      inReplyTo?: unknown;
      ok?: unknown;
      err?: unknown;
      params?: unknown;
    };
    if (message.type === 'response') {
      this.settle(message);
      return;
    }
    if (message.type === 'response/part') {
      this.part(data as { inReplyTo?: unknown; index?: unknown; data?: unknown });
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
    if ('err' in message) {
      p.reject(new Error(String(message.err)));
      return;
    }
    if (!p.parts) {
      p.resolve(message.ok);
      return;
    }
    const joined = joinParts(message.ok, p.parts);
    if (joined) p.resolve(joined.value);
    else p.reject(new Error('the answer came without all of its parts'));
  }

  /** A typed array sent ahead of the answer to a request of ours; kept until the answer comes. */
  private part(message: { inReplyTo?: unknown; index?: unknown; data?: unknown }): void {
    const p = typeof message.inReplyTo === 'number' ? this.pending.get(message.inReplyTo) : undefined;
    if (!p) {
      this.options.onError?.(`part of a response to unknown or expired request ${String(message.inReplyTo)}`);
      return;
    }
    const index = message.index;
    if (
      typeof index !== 'number' ||
      !Number.isInteger(index) ||
      index < 0 ||
      index >= MAX_PARTS ||
      !ArrayBuffer.isView(message.data)
    ) {
      this.options.onError?.('ignored a malformed response part');
      return;
    }
    (p.parts ??= new Map()).set(index, message.data);
  }

  private async answer(method: string, id: number, params: unknown): Promise<void> {
    const handler = this.handlers.get(method);
    if (!handler) {
      this.options.onError?.(`no handler for request ${JSON.stringify(method.slice(0, 64))}`);
      this.post({ type: 'response', inReplyTo: id, err: `no handler for ${method.slice(0, 64)}` });
      return;
    }
    try {
      const ok = await handler(params);
      const minBytes = this.options.partBytes;
      if (minBytes === undefined) {
        this.post({ type: 'response', inReplyTo: id, ok });
        return;
      }
      const split = splitParts(ok, minBytes);
      for (const [index, data] of split.parts.entries())
        await this.post({ type: 'response/part', inReplyTo: id, index, data });
      this.post({ type: 'response', inReplyTo: id, ok: split.value });
    } catch (e) {
      this.post({ type: 'response', inReplyTo: id, err: e instanceof Error ? e.message : String(e) });
    }
  }
}
