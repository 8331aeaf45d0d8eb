/**
 * The routers of a fleet: which of K GPUs (each an engine with its own KV cache) serves
 * a call, decided when the call arrives, from what the GPUs hold at that moment. See
 * docs/design/simulator.md §8 for the sources of each rule.
 */

/** The routers, in the order the CLI lists them. */
export const ROUTER_NAMES = ['round-robin', 'least-loaded', 'session-affinity', 'kv-aware'] as const;

/** A router. */
export type RouterName = (typeof ROUTER_NAMES)[number];

/** K GPUs behind a router; every GPU has the same engine parameters. */
export interface FleetParams {
  gpus: number;
  router: RouterName;
}

/** The router a fleet uses unless told: prefix/KV-aware with load balancing, as llm-d's default scheduling profile (prefix-cache and queue scorers) is. */
export const DEFAULT_ROUTER: RouterName = 'kv-aware';

/** The most GPUs a fleet may have (the what-if panel and the CLI check it). */
export const MAX_GPUS = 1024;

/** What a router may look at: each GPU's load and, for a call, how much of its prompt each GPU holds. */
export interface FleetView {
  readonly gpus: number;
  /** Calls routed to the GPU so far. */
  routedCalls(gpu: number): number;
  /** Tokens (prompt and generated so far) of the requests the GPU is running, has waiting, or has been sent but not yet queued. */
  loadTokens(gpu: number): number;
  /** Prompt tokens of request `r` the GPU would serve from its cache now. */
  cachedPrefixTokens(gpu: number, r: number): number;
}

/** A call to route: its request, its session (−1 for a request of an open-loop log) and its prompt size. */
export interface RoutedCall {
  request: number;
  session: number;
  promptTokens: number;
}

/**
 * The GPU with the smallest `cost`; ties go to the lower load, then to the GPU that has
 * been sent fewer calls, then to the lower index. (Dynamo breaks ties by the smaller
 * cache index, then at random; llm-d's picker at random. Counting calls is a
 * deterministic stand-in that spreads tied calls the same way: idle GPUs take turns.)
 */
function cheapest(view: FleetView, cost: (g: number, load: number) => number): number {
  let best = 0;
  let bestCost = Infinity;
  let bestLoad = Infinity;
  let bestCalls = Infinity;
  for (let g = 0; g < view.gpus; g++) {
    const load = view.loadTokens(g);
    const c = cost(g, load);
    const calls = view.routedCalls(g);
    if (c < bestCost || (c === bestCost && (load < bestLoad || (load === bestLoad && calls < bestCalls)))) {
      best = g;
      bestCost = c;
      bestLoad = load;
      bestCalls = calls;
    }
  }
  return best;
}

/**
 * One fleet's routing state (round-robin's counter, each session's GPU). Deterministic:
 * the same calls in the same order against the same views give the same GPUs.
 */
export class Router {
  private next = 0;
  private readonly sessionGpu = new Map<number, number>();

  constructor(readonly name: RouterName) {}

  route(call: RoutedCall, view: FleetView): number {
    switch (this.name) {
      case 'round-robin': {
        // Each call to the next GPU in turn, whatever session it belongs to.
        const g = this.next;
        this.next = (this.next + 1) % view.gpus;
        return g;
      }
      case 'least-loaded':
        return leastLoaded(view);
      case 'session-affinity': {
        // A session stays where its first call went; that first call goes to the least-loaded GPU.
        if (call.session < 0) return leastLoaded(view);
        const known = this.sessionGpu.get(call.session);
        if (known !== undefined) return known;
        const g = leastLoaded(view);
        this.sessionGpu.set(call.session, g);
        return g;
      }
      case 'kv-aware':
        return kvAware(call, view);
    }
  }
}

/** The GPU with the fewest running + waiting tokens (ties: fewer calls so far, then the lower index). */
export function leastLoaded(view: FleetView): number {
  return cheapest(view, (_g, load) => load);
}

/**
 * NVIDIA Dynamo's KV router cost with its default weight: the prompt tokens the GPU would
 * have to prefill (prompt − its cached prefix) plus the tokens it already holds for live
 * requests; the cheapest GPU wins (ties as in `cheapest`). A GPU
 * holding the session's prefix wins unless its load exceeds the others' by more than
 * the prefix it saves.
 */
export function kvAware(call: RoutedCall, view: FleetView): number {
  return cheapest(view, (g, load) => call.promptTokens - view.cachedPrefixTokens(g, call.request) + load);
}
