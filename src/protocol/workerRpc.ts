// Requests and their answers between a client and one worker, in any runtime: a Node
// worker thread (the trace worker, the index worker, a sweep thread) or a Web Worker (the
// what-if simulator). Each worker names its methods in a map (method → params and result)
// in its own protocol file beside this one; the client sends with WorkerRpc.request and
// the worker answers with `respond`. What a worker posts besides answers (progress,
// events, a job's partial results) is its protocol's own and the client handles it.

/** Method → params and result: what a worker answers (an interface of them is checked against this). */
export type RpcMethods<Methods> = { [M in keyof Methods]: { params: unknown; result: unknown } };

/** A request to a worker: `id` comes back in the answer. */
export type RpcRequest<
  Methods extends RpcMethods<Methods>,
  M extends keyof Methods & string = keyof Methods & string,
> = {
  [K in M]: { kind: 'request'; id: number; method: K; params: Methods[K]['params'] };
}[M];

/** A worker's answer to one request: its result, or the error it raised (`code` says which kind, for a client that tells kinds apart). */
export type RpcResponse =
  | { kind: 'response'; id: number; ok: unknown }
  | { kind: 'response'; id: number; err: string; code?: string };

/** A request the worker answered with an error: its message, and its `code` when the worker sent one. */
export class RpcError extends Error {
  constructor(
    message: string,
    readonly code: string | null,
  ) {
    super(message);
  }
}

/** Whether a message a worker posted is an answer (rather than one of its protocol's own messages). */
export function isRpcResponse(message: unknown): message is RpcResponse {
  return (
    typeof message === 'object' &&
    message !== null &&
    (message as { kind?: unknown }).kind === 'response' &&
    typeof (message as { id?: unknown }).id === 'number'
  );
}

/**
 * The client's end of one worker: numbers the requests, keeps their promises, settles each
 * with its answer, and once the worker is gone rejects every pending request and every
 * later one. The caller owns the worker: this posts through `send` and is fed what the
 * worker posts (`receive`).
 */
export class WorkerRpc<Methods extends RpcMethods<Methods>> {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  private stoppedBy: Error | null = null;

  /** `send` posts a request to the worker; `transfer` lists the buffers that move with it rather than being copied. */
  constructor(private readonly send: (request: RpcRequest<Methods>, transfer: readonly unknown[]) => void) {}

  /** Asks the worker; resolves with its answer, rejects with its error (an RpcError) or with why the worker stopped. */
  request<M extends keyof Methods & string>(
    method: M,
    params: Methods[M]['params'],
    transfer: readonly unknown[] = [],
  ): Promise<Methods[M]['result']> {
    if (this.stoppedBy) return Promise.reject(this.stoppedBy);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      this.send({ kind: 'request', id, method, params } as RpcRequest<Methods>, transfer);
    });
  }

  /** Settles the request a message answers; false when the message is not an answer (the caller's protocol handles it). */
  receive(message: unknown): boolean {
    if (!isRpcResponse(message)) return false;
    const p = this.pending.get(message.id);
    if (!p) return true;
    this.pending.delete(message.id);
    if ('err' in message) p.reject(new RpcError(message.err, message.code ?? null));
    else p.resolve(message.ok);
    return true;
  }

  /** The worker is gone (or going): every pending request and every later one rejects with `error` (the first reason given stays). */
  stop(error: Error): void {
    this.stoppedBy ??= error;
    for (const p of this.pending.values()) p.reject(this.stoppedBy);
    this.pending.clear();
  }

  /** Why the worker stopped, or null while it runs. */
  get stopped(): Error | null {
    return this.stoppedBy;
  }
}

/**
 * The worker's end: runs one request's handler and posts its answer, or the error it
 * raised (with the `code` that `codeOf` gives it). A handler that returns a promise is
 * answered when it settles, and the promise returned here settles then too (never
 * rejects). `transfer` lists what of an answer moves to the client rather than being copied.
 */
export function respond(
  post: (response: RpcResponse, transfer: readonly unknown[]) => void,
  id: number,
  run: () => unknown,
  options: { transfer?: (ok: unknown) => readonly unknown[]; codeOf?: (error: unknown) => string | null } = {},
): Promise<void> | void {
  const fail = (e: unknown): void => {
    const code = options.codeOf?.(e) ?? null;
    post(
      { kind: 'response', id, err: e instanceof Error ? e.message : String(e), ...(code === null ? {} : { code }) },
      [],
    );
  };
  const succeed = (ok: unknown): void => {
    try {
      post({ kind: 'response', id, ok }, options.transfer?.(ok) ?? []);
    } catch (e) {
      // An answer that cannot be posted (it does not clone) is answered with why.
      fail(e);
    }
  };
  let ok: unknown;
  try {
    ok = run();
  } catch (e) {
    fail(e);
    return;
  }
  if (ok instanceof Promise) return ok.then(succeed, fail);
  succeed(ok);
}
