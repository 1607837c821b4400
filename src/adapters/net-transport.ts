/**
 * The gossip transport: TCP for the stream (`send`: join, push-pull) and UDP for datagrams
 * (`sendDatagram`: probes, acks, gossip), both on the same port number, as memberlist does.
 * Each channel keeps its own guarantees (tcp-transport.ts, udp-transport.ts); one address
 * book feeds both, and one handler receives from both.
 *
 * With a keyring (`keyring`, gossip-keyring.ts) both channels are sealed with AES-256-GCM:
 * each datagram whole (udp-transport.ts), and each stream message as a sealed byte string
 * holding `[senderId, message]`. A stream message that does not open, or whose sealed sender
 * differs from the connection's, is refused like any invalid frame (the TCP transport closes
 * that connection) and counted by reason in `metrics().stream`.
 */
import type { NodeId } from '../core/ids.js';
import { CoordError } from '../errors.js';
import type { Transport, TransportHandler } from '../ports/transport.js';
import { MessageCodec } from './frame-codec.js';
import type { GossipKeyring, OpenFailure } from './gossip-keyring.js';
import {
  validateSafely, type MessageValidation, type MessageValidator,
} from './message-validators.js';
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
  /** Seal both channels with this keyring (see the module comment). Default: none. */
  readonly keyring?: GossipKeyring;
}

/** Stream messages refused by the keyring, by reason (all zero without a keyring). */
export interface StreamSealMetrics {
  droppedDecryptUnencrypted: number;
  droppedDecryptTruncated: number;
  droppedDecryptUnknownKey: number;
  droppedDecryptAuthFailed: number;
  /** Opened, but the sealed sender id is not the one the connection's hello named. */
  droppedSenderMismatch: number;
  /** Opened, but not a valid message. */
  invalidMessages: number;
}

export interface NetTransportMetrics {
  readonly tcp: TcpTransportMetrics;
  readonly udp: UdpTransportMetrics;
  readonly stream: StreamSealMetrics;
}

/** A stream message as opened: who sealed it, and what. */
interface Opened<M> {
  readonly sealedBy: NodeId;
  readonly message: M;
}

const STREAM_DECRYPT_COUNTER: Readonly<Record<OpenFailure, keyof StreamSealMetrics>> = {
  'unencrypted': 'droppedDecryptUnencrypted',
  'truncated': 'droppedDecryptTruncated',
  'unknown-key': 'droppedDecryptUnknownKey',
  'auth-failed': 'droppedDecryptAuthFailed',
};

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
    const stream = zeroStreamMetrics();
    const keyring = options.keyring;
    const codec = new MessageCodec();
    const tcpValidate: MessageValidator<unknown> = keyring === undefined ? options.validate
      : (value) => openStreamMessage(keyring, options.validate, codec, stream, value);
    for (let attempt = 1; ; attempt++) {
      const tcp = await TcpTransport.listen<unknown>({ ...options, validate: tcpValidate });
      try {
        const udp = await UdpTransport.bind({
          localId: options.localId,
          listen: { host: tcp.address.host, port: tcp.address.port },
          validate: options.validate,
          config: { ...options.datagram, clusterName: tcp.config.clusterName },
          ...(options.peers === undefined ? {} : { peers: options.peers }),
          ...(keyring === undefined ? {} : { keyring }),
          ...(options.logger === undefined ? {} : { logger: options.logger }),
        });
        return new NetTransport(tcp, udp, keyring, stream);
      } catch (error) {
        tcp.close();
        const retry = requestedPort === 0 && attempt < EPHEMERAL_PORT_TRIES_MAX &&
          error instanceof CoordError && error.code === 'CONCLAVE_UNAVAILABLE';
        if (!retry) throw error;
      }
    }
  }

  private readonly codec = new MessageCodec();

  /** Without a keyring `tcp` carries `M`; with one, sealed byte strings (`Opened<M>` inside). */
  private constructor(readonly tcp: TcpTransport<unknown>, readonly udp: UdpTransport<M>,
    private readonly keyring: GossipKeyring | undefined,
    private readonly stream: StreamSealMetrics) {
    this.localId = tcp.localId;
  }

  /** The bound address, the same port for TCP and UDP. */
  get address(): PeerAddress {
    return this.tcp.address;
  }

  metrics(): NetTransportMetrics {
    return { tcp: this.tcp.metrics(), udp: this.udp.metrics(), stream: { ...this.stream } };
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
    if (this.keyring === undefined) {
      this.tcp.send(to, message);
      return;
    }
    // Encoding cannot fail for a validated message type; if it does, the TCP transport's own
    // encode of `undefined` would be refused and counted there.
    const encoded = this.codec.encodePayload([this.localId, message], Number.MAX_SAFE_INTEGER);
    this.tcp.send(to, encoded.ok ? this.keyring.seal(encoded.bytes, 'tcp') : undefined);
  }

  sendDatagram(to: NodeId, message: M): void {
    this.udp.sendDatagram(to, message);
  }

  setHandler(handler: TransportHandler<M>): void {
    this.udp.setHandler(handler);
    if (this.keyring === undefined) {
      this.tcp.setHandler(handler as TransportHandler<unknown>);
      return;
    }
    this.tcp.setHandler({
      onPeerReset: (peer) => handler.onPeerReset?.(peer),
      onMessage: (from, value) => {
        const opened = value as Opened<M>;
        // The hello's id and the sealed one must agree: a key holder's message relayed by
        // someone on another connection under another name is refused.
        if (opened.sealedBy !== from) {
          this.stream.droppedSenderMismatch++;
          return;
        }
        handler.onMessage(from, opened.message);
      },
    });
  }

  close(): void {
    this.tcp.close();
    this.udp.close();
  }
}

/** The stream validator under a keyring: opens, decodes, then validates the message. */
function openStreamMessage<M>(keyring: GossipKeyring, validate: MessageValidator<M>,
  codec: MessageCodec, stream: StreamSealMetrics, value: unknown): MessageValidation<Opened<M>> {
  if (!(value instanceof Uint8Array)) {
    stream.droppedDecryptUnencrypted++;
    return { ok: false, problem: 'gossip stream message not encrypted (is the sender running '
      + 'without --encrypt-key-file?)' };
  }
  const opened = keyring.open(value, 'tcp');
  if (!opened.ok) {
    stream[STREAM_DECRYPT_COUNTER[opened.reason]]++;
    return { ok: false, problem: `gossip stream message did not open: ${opened.reason}` };
  }
  const decoded = codec.decodePayload(opened.plain);
  const pair = decoded.ok ? decoded.value : undefined;
  if (!Array.isArray(pair) || pair.length !== 2 || typeof pair[0] !== 'string') {
    stream.invalidMessages++;
    return { ok: false, problem: 'sealed gossip stream message is not [sender, message]' };
  }
  const validation = validateSafely(validate, pair[1]);
  if (!validation.ok) {
    stream.invalidMessages++;
    return validation;
  }
  return { ok: true, message: { sealedBy: pair[0] as NodeId, message: validation.message } };
}

function zeroStreamMetrics(): StreamSealMetrics {
  return {
    droppedDecryptUnencrypted: 0, droppedDecryptTruncated: 0, droppedDecryptUnknownKey: 0,
    droppedDecryptAuthFailed: 0, droppedSenderMismatch: 0, invalidMessages: 0,
  };
}
