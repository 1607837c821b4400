/**
 * The gossip transport: TCP for the stream (`send`: join, push-pull) and UDP for datagrams
 * (`sendDatagram`: probes, acks, gossip), both on the same port number, as memberlist does.
 * Each channel keeps its own guarantees (tcp-transport.ts, udp-transport.ts); one address
 * book feeds both, and one handler receives from both.
 */
import type { NodeId } from '../core/ids.js';
import { CoordError } from '../errors.js';
import type { Transport, TransportHandler } from '../ports/transport.js';
import type { PeerAddress } from './peer-address.js';
import {
  TcpTransport, type SetPeerAddressOptions, type TcpTransportMetrics, type TcpTransportOptions,
} from './tcp-transport.js';
import {
  UdpTransport, type UdpTransportConfig, type UdpTransportMetrics,
} from './udp-transport.js';

export interface NetTransportOptions<M> extends TcpTransportOptions<M> {
  /** UDP settings; the cluster name is the TCP config's. */
  readonly datagram?: Partial<Omit<UdpTransportConfig, 'clusterName'>>;
}

export interface NetTransportMetrics {
  readonly tcp: TcpTransportMetrics;
  readonly udp: UdpTransportMetrics;
}

/** Tries of an ephemeral TCP port whose UDP twin turned out to be taken. */
const EPHEMERAL_PORT_TRIES_MAX = 8;

export class NetTransport<M> implements Transport<M> {
  readonly localId: NodeId;

  /**
   * Binds TCP and UDP on the same host and port. With port 0, the OS picks the TCP port and
   * UDP takes the same number (retried with another port if that one is taken for UDP).
   * Rejects with CONCLAVE_UNAVAILABLE or CONCLAVE_CONFIG_INVALID.
   */
  static async listen<M>(options: NetTransportOptions<M>): Promise<NetTransport<M>> {
    const requestedPort = options.listen?.port ?? 0;
    for (let attempt = 1; ; attempt++) {
      const tcp = await TcpTransport.listen(options);
      try {
        const udp = await UdpTransport.bind({
          localId: options.localId,
          listen: { host: tcp.address.host, port: tcp.address.port },
          validate: options.validate,
          config: { ...options.datagram, clusterName: tcp.config.clusterName },
          ...(options.peers === undefined ? {} : { peers: options.peers }),
          ...(options.logger === undefined ? {} : { logger: options.logger }),
        });
        return new NetTransport(tcp, udp);
      } catch (error) {
        tcp.close();
        const retry = requestedPort === 0 && attempt < EPHEMERAL_PORT_TRIES_MAX &&
          error instanceof CoordError && error.code === 'CONCLAVE_UNAVAILABLE';
        if (!retry) throw error;
      }
    }
  }

  private constructor(readonly tcp: TcpTransport<M>, readonly udp: UdpTransport<M>) {
    this.localId = tcp.localId;
  }

  /** The bound address, the same port for TCP and UDP. */
  get address(): PeerAddress {
    return this.tcp.address;
  }

  metrics(): NetTransportMetrics {
    return { tcp: this.tcp.metrics(), udp: this.udp.metrics() };
  }

  peerAddress(id: NodeId): PeerAddress | undefined {
    return this.tcp.peerAddress(id);
  }

  /** Sets the peer's address for both channels (the same port for TCP and UDP). */
  setPeerAddress(
    id: NodeId, address: PeerAddress | undefined, options?: SetPeerAddressOptions,
  ): void {
    this.tcp.setPeerAddress(id, address, options);
    this.udp.setPeerAddress(id, address);
  }

  send(to: NodeId, message: M): void {
    this.tcp.send(to, message);
  }

  sendDatagram(to: NodeId, message: M): void {
    this.udp.sendDatagram(to, message);
  }

  setHandler(handler: TransportHandler<M>): void {
    this.tcp.setHandler(handler);
    this.udp.setHandler(handler);
  }

  close(): void {
    this.tcp.close();
    this.udp.close();
  }
}
