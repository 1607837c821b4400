/**
 * The etcd transport, loaded on its first use: @grpc/grpc-js and protobufjs take about 0.3 s
 * of CPU to load, which every `conclave` command and every Conclave-backed client would pay
 * at start if connect() imported them up front (issue 18: commands are loaded lazily).
 */
import type { ClientAnswer, ClientEndpoint, ClientRequest, CallOptions, ClientTransport,
  LeaseStreamOpening, WatchOpening, WatchRequest } from '../../ports/client-transport.js';
import type { EtcdClientTransportOptions } from './etcd-client-transport.js';

export class LazyEtcdClientTransport implements ClientTransport {
  private loading: Promise<ClientTransport> | undefined;
  private loaded: ClientTransport | undefined;
  private closed = false;

  constructor(private readonly options: EtcdClientTransportOptions = {}) {}

  async call(endpoint: ClientEndpoint, request: ClientRequest, options?: CallOptions):
    Promise<ClientAnswer> {
    return (await this.inner()).call(endpoint, request, options);
  }

  async openWatch(endpoint: ClientEndpoint, request: WatchRequest, options?: CallOptions):
    Promise<WatchOpening> {
    return (await this.inner()).openWatch(endpoint, request, options);
  }

  async openLeaseStream(endpoint: ClientEndpoint, options?: CallOptions):
    Promise<LeaseStreamOpening> {
    return (await this.inner()).openLeaseStream(endpoint, options);
  }

  /** Closes the loaded transport; one still loading is closed as soon as it is there. */
  close(): void {
    this.closed = true;
    this.loaded?.close();
  }

  private inner(): Promise<ClientTransport> {
    this.loading ??= import('./etcd-client-transport.js').then(({ EtcdClientTransport }) => {
      const transport = new EtcdClientTransport(this.options);
      // Closed while loading: later calls answer `lost` with `sent: false`, as documented.
      if (this.closed) transport.close();
      this.loaded = transport;
      return transport;
    });
    return this.loading;
  }
}
