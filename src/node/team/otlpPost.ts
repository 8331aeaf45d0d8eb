/**
 * POSTs OTLP/JSON request bodies to an OTLP/HTTP receiver (the OTLP specification's
 * "OTLP/HTTP": `POST /v1/traces`, `Content-Type: application/json`), one body after the other,
 * stopping at the first the receiver refuses or cannot be reached, with a message that says
 * which and why.
 */

/** What the receiver answered. */
export interface PostResult {
  /** The URL posted to. */
  url: string;
  /** Spans the receivers said they rejected (OTLP's `partialSuccess`), over all requests. */
  rejectedSpans: number;
  /** The receiver's own words about the rejected spans, when it gave some. */
  message: string | null;
  /** Why sending stopped; null when every request was accepted. */
  error: string | null;
}

/** The traces URL: the endpoint as given when it ends with `/v1/traces`, else with `/v1/traces` appended (as OTEL_EXPORTER_OTLP_ENDPOINT is read). */
export function tracesUrl(endpoint: string): string {
  const url = new URL(endpoint);
  if (!/\/v1\/traces\/?$/.test(url.pathname)) url.pathname = `${url.pathname.replace(/\/+$/, '')}/v1/traces`;
  return url.toString();
}

/** A receiver's answer cut to one readable line. */
function excerpt(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}

/** Posts each body in turn; `timeoutMs` bounds each request. */
export async function postOtlp(
  endpoint: string,
  bodies: readonly string[],
  headers: ReadonlyArray<[string, string]>,
  timeoutMs = 30_000,
): Promise<PostResult> {
  let url: string;
  try {
    url = tracesUrl(endpoint);
  } catch {
    return { url: endpoint, rejectedSpans: 0, message: null, error: `${endpoint} is not a URL` };
  }
  const result: PostResult = { url, rejectedSpans: 0, message: null, error: null };
  for (const [i, body] of bodies.entries()) {
    const which = bodies.length === 1 ? 'the request' : `request ${i + 1} of ${bodies.length}`;
    let response: Response;
    try {
      response = await fetch(url, {
        method: 'POST',
        headers: { ...Object.fromEntries(headers), 'Content-Type': 'application/json' },
        body,
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (e) {
      const cause = e instanceof Error && e.cause instanceof Error ? e.cause : null;
      const code = cause && 'code' in cause ? String((cause as { code: unknown }).code) : null;
      const why =
        e instanceof Error && e.name === 'TimeoutError'
          ? `no answer within ${timeoutMs / 1000} s`
          : (code ?? cause?.message ?? (e instanceof Error ? e.message : String(e)));
      return {
        ...result,
        error: `could not reach ${url} (${why})${i > 0 ? `; ${i} of ${bodies.length} requests had been sent` : ''}`,
      };
    }
    const text = await response.text().catch(() => '');
    if (!response.ok) {
      const hint =
        response.status === 401 || response.status === 403
          ? ' (check the --header with the credentials)'
          : response.status === 413
            ? ' (try a smaller --max-request-bytes)'
            : response.status === 415
              ? ' (this receiver may take only protobuf: send through an OpenTelemetry collector)'
              : '';
      return {
        ...result,
        error: `${url} refused ${which}: HTTP ${response.status} ${response.statusText}${hint}${text ? `: ${excerpt(text)}` : ''}${i > 0 ? `; ${i} of ${bodies.length} requests had been accepted` : ''}`,
      };
    }
    // OTLP: a 200 may carry a partialSuccess with the spans the receiver dropped.
    try {
      const partial = (
        JSON.parse(text) as { partialSuccess?: { rejectedSpans?: string | number; errorMessage?: string } }
      ).partialSuccess;
      const rejected = Number(partial?.rejectedSpans ?? 0);
      if (Number.isFinite(rejected) && rejected > 0) result.rejectedSpans += rejected;
      if (partial?.errorMessage) result.message = excerpt(partial.errorMessage);
    } catch {
      // An empty or non-JSON success body: nothing rejected.
    }
  }
  return result;
}
