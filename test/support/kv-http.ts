/**
 * A minimal HTTP caller for real-process tests: one request, redirects followed by hand, a
 * deadline, and the outcome classified as the contract says (ok / failed / unknown).
 */
export type CallOutcome =
  | { readonly kind: 'ok'; readonly body: Record<string, unknown> }
  | { readonly kind: 'failed'; readonly code: string; readonly status: number }
  | { readonly kind: 'unknown'; readonly reason: string };

export async function call(endpoint: string, path: string, body: unknown, timeoutMs: number): Promise<CallOutcome> {
  let url = `http://${endpoint}${path}`;
  for (let hop = 0; hop < 3; hop++) {
    let response: Response;
    try {
      response = await fetch(url, {
        method: 'POST', body: JSON.stringify(body), redirect: 'manual',
        headers: { 'content-type': 'application/json' }, signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      // Refused before sending is a definite failure; anything else may have reached the server.
      const cause = (error as { cause?: { code?: string } }).cause;
      if (cause?.code === 'ECONNREFUSED') return { kind: 'failed', code: 'ECONNREFUSED', status: 0 };
      return { kind: 'unknown', reason: String(error) };
    }
    if (response.status === 307) {
      url = response.headers.get('location') ?? url;
      await response.body?.cancel();
      continue;
    }
    const json = (await response.json().catch(() => ({}))) as Record<string, unknown>;
    if (response.ok) return { kind: 'ok', body: json };
    const error = json['error'] as { code?: string; outcome?: string } | undefined;
    if (error?.outcome === 'unknown') return { kind: 'unknown', reason: error.code ?? String(response.status) };
    return { kind: 'failed', code: error?.code ?? String(response.status), status: response.status };
  }
  return { kind: 'failed', code: 'TOO_MANY_REDIRECTS', status: 307 };
}
