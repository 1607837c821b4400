/**
 * Which client transport the client tests drive: the stream (connect()'s default) when a test
 * file runs on its own, HTTP/JSON when test/client/over-http.test.ts imports it. Every client
 * test passes it to connect(), so the same tests prove both transports.
 */
export type TransportUnderTest = 'stream' | 'http';

interface Selection {
  conclaveClientTransport?: TransportUnderTest;
}

export const TRANSPORT: TransportUnderTest =
  (globalThis as Selection).conclaveClientTransport ?? 'stream';

/** Makes the client test files imported after this call run over `transport`. */
export function selectTransport(transport: TransportUnderTest): void {
  (globalThis as Selection).conclaveClientTransport = transport;
}
