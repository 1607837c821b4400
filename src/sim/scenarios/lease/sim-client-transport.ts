/**
 * The client transport port (src/ports/client-transport.ts) over the simulated network: what
 * the shipped client uses in the lease scenario instead of HTTP. Endpoints are member ids. A
 * call is one message and its answer; a watch or keep-alive stream is an id with messages both
 * ways (core-protocol.ts). Everything a member sends is in memory already typed, and the
 * client checks answers as it checks HTTP ones.
 *
 * As a real connection would: a member that crashes resets its calls and streams (the network
 * reports it), a message lost on a stream breaks the stream (the member's `seq` shows the
 * gap), and nothing times out here (the client times every wait on its own timer). Anything
 * handed to the network counts as sent: a cut-off or crashed member may have got it.
 */
import type { NodeId } from '../../../core/ids.js';
import type {
  CallOptions, ClientAnswer, ClientEndpoint, ClientRequest, ClientTransport, KeepAliveAnswer,
  LeaseStream, LeaseStreamOpening, LostAnswer, StreamEnd, WatchFrame, WatchOpening,
  WatchRequest, WatchStream,
} from '../../../ports/client-transport.js';
import type { Transport } from '../../../ports/transport.js';
import type { ClientToMember, LeaseNetMessage, MemberToClient } from './core-protocol.js';

/** One open stream's receiving end. */
interface StreamEndpoint {
  readonly member: NodeId;
  /** The seq the next member message must carry. */
  nextSeq: number;
  /** A member message of this stream, in order. */
  receive(message: MemberToClient): void;
  /** The stream broke (reset, gap, closed by either side). */
  broke(detail: string): void;
}

interface PendingCall {
  readonly member: NodeId;
  readonly resolve: (answer: ClientAnswer) => void;
}

interface PendingOpen {
  readonly member: NodeId;
  readonly opened: () => void;
  readonly refused: (message: Extract<MemberToClient, { kind: 'refused' }>) => void;
  readonly lost: (detail: string) => void;
}

export class SimClientTransport implements ClientTransport {
  private readonly calls = new Map<string, PendingCall>();
  private readonly opening = new Map<string, PendingOpen>();
  private readonly streams = new Map<string, StreamEndpoint>();
  private idNext = 1;
  private closed = false;

  constructor(private readonly network: Transport<LeaseNetMessage>) {
    network.setHandler({
      onMessage: (from, message) => {
        if (message.kind === 'member') this.onMember(from, message.message);
      },
      onPeerReset: (peer) => this.onReset(peer),
    });
  }

  /** Calls and streams waiting or open (for tests). */
  get inflight(): number {
    return this.calls.size + this.opening.size + this.streams.size;
  }

  call(endpoint: ClientEndpoint, request: ClientRequest, options: CallOptions = {}):
    Promise<ClientAnswer> {
    const member = endpoint as NodeId;
    const early = this.refuseEarly(member, options.signal);
    if (early !== undefined) return Promise.resolve(early);
    const id = this.newId();
    return new Promise((resolve) => {
      const signal = options.signal;
      const onAbort = (): void => {
        if (!this.calls.delete(id)) return;
        resolve(lost(member, true, 'aborted'));
      };
      this.calls.set(id, { member, resolve: (answer) => {
        signal?.removeEventListener('abort', onAbort);
        resolve(answer);
      } });
      signal?.addEventListener('abort', onAbort, { once: true });
      this.send(member, { kind: 'call', id, request });
    });
  }

  openWatch(endpoint: ClientEndpoint, request: WatchRequest, options: CallOptions = {}):
    Promise<WatchOpening> {
    const member = endpoint as NodeId;
    const early = this.refuseEarly(member, options.signal);
    if (early !== undefined) return Promise.resolve(early);
    const stream = new SimWatchStream(this.newId(), member, () => this.drop(stream.id, true));
    return this.open(member, stream, { kind: 'watch-open', id: stream.id, request },
      options.signal).then((opening) => opening ?? { kind: 'open', stream, servedBy: member });
  }

  openLeaseStream(endpoint: ClientEndpoint, options: CallOptions = {}):
    Promise<LeaseStreamOpening> {
    const member = endpoint as NodeId;
    const early = this.refuseEarly(member, options.signal);
    if (early !== undefined) return Promise.resolve(early);
    const stream = new SimLeaseStream(this.newId(), member, (n, leaseId) => this.send(member,
      { kind: 'keepalive', id: stream.id, n, leaseId }), () => this.drop(stream.id, true));
    return this.open(member, stream, { kind: 'lease-open', id: stream.id }, options.signal)
      .then((opening) => opening ?? { kind: 'open', stream, servedBy: member });
  }

  close(): void {
    this.closed = true;
    for (const [id, call] of [...this.calls]) {
      this.calls.delete(id);
      call.resolve(lost(call.member, true, 'the transport was closed'));
    }
    for (const [id, open] of [...this.opening]) {
      this.opening.delete(id);
      open.lost('the transport was closed');
    }
    for (const id of [...this.streams.keys()]) this.drop(id, true);
  }

  private newId(): string {
    return `${this.network.localId}.${this.idNext++}`;
  }

  private refuseEarly(member: NodeId, signal: AbortSignal | undefined): LostAnswer | undefined {
    if (this.closed) return lost(member, false, 'the transport was closed', false);
    if (signal?.aborted === true) return lost(member, false, 'aborted', true);
    return undefined;
  }

  /** Opens `stream`; resolves undefined once open, or with the refusal or loss. */
  private open(member: NodeId, stream: SimWatchStream | SimLeaseStream, message: ClientToMember,
    signal: AbortSignal | undefined): Promise<Exclude<WatchOpening, { kind: 'open' }>
    | undefined> {
    return new Promise((resolve) => {
      const done = (result: Exclude<WatchOpening, { kind: 'open' }> | undefined): void => {
        signal?.removeEventListener('abort', onAbort);
        this.opening.delete(stream.id);
        resolve(result);
      };
      const onAbort = (): void => {
        if (!this.opening.has(stream.id)) return;
        this.send(member, { kind: 'close', id: stream.id });
        done(lost(member, true, 'aborted'));
      };
      this.opening.set(stream.id, {
        member,
        opened: () => {
          this.streams.set(stream.id, stream);
          stream.nextSeq = 1;
          done(undefined);
        },
        refused: (m) => done({ kind: 'refused', error: m.error, servedBy: member,
          ...(m.leader === undefined ? {} : { leader: m.leader }) }),
        lost: (detail) => done(lost(member, true, detail)),
      });
      signal?.addEventListener('abort', onAbort, { once: true });
      this.send(member, message);
    });
  }

  private onMember(from: NodeId, message: MemberToClient): void {
    switch (message.kind) {
      case 'answer': {
        const call = this.calls.get(message.id);
        if (call === undefined || call.member !== from) return; // late or repeated
        this.calls.delete(message.id);
        const { reply } = message;
        return call.resolve(reply.kind === 'ok'
          ? { kind: 'ok', body: reply.body, servedBy: from }
          : { kind: 'refused', error: reply.error, servedBy: from,
            ...(reply.leader === undefined ? {} : { leader: reply.leader }) });
      }
      case 'opened':
        return this.opening.get(message.id)?.opened();
      case 'refused':
        return this.opening.get(message.id)?.refused(message);
      case 'frame':
      case 'keepalive-answer':
      case 'closed':
        return this.onStream(message);
    }
  }

  /** A stream message: in order, or the stream broke. */
  private onStream(message: Extract<MemberToClient, { seq: number }>): void {
    const stream = this.streams.get(message.id);
    if (stream === undefined || message.seq < stream.nextSeq) return; // gone, or a repeat
    if (message.seq > stream.nextSeq) {
      return this.drop(message.id, true, 'a message of the stream was lost');
    }
    stream.nextSeq++;
    if (message.kind === 'closed') return this.drop(message.id, false, message.detail);
    stream.receive(message);
  }

  /** Ends stream `id` here (telling the member when it may still think it open). */
  private drop(id: string, tellMember: boolean, detail = 'the stream was closed'): void {
    const stream = this.streams.get(id);
    if (stream === undefined) return;
    this.streams.delete(id);
    if (tellMember) this.send(stream.member, { kind: 'close', id });
    stream.broke(detail);
  }

  /** The member crashed: its calls and streams break, as their connections would. */
  private onReset(member: NodeId): void {
    for (const [id, call] of [...this.calls]) {
      if (call.member !== member) continue;
      this.calls.delete(id);
      call.resolve(lost(member, true, 'connection reset'));
    }
    for (const [id, open] of [...this.opening]) if (open.member === member) {
      this.opening.delete(id);
      open.lost('connection reset');
    }
    for (const [id, stream] of [...this.streams]) {
      if (stream.member === member) this.drop(id, false, 'connection reset');
    }
  }

  private send(member: NodeId, message: ClientToMember): void {
    this.network.send(member, { kind: 'client', message });
  }
}

function lost(member: NodeId, sent: boolean, detail: string, aborted = detail === 'aborted'):
  LostAnswer {
  return { kind: 'lost', sent, aborted, detail, servedBy: member };
}

/** A watch's receiving end: frames queue until read. */
class SimWatchStream implements WatchStream, StreamEndpoint {
  nextSeq = 0;
  private readonly frames: (WatchFrame | StreamEnd)[] = [];
  private waiting: ((frame: WatchFrame | StreamEnd) => void) | undefined;
  private ended = false;

  constructor(readonly id: string, readonly member: NodeId,
    private readonly onClose: () => void) {}

  next(): Promise<WatchFrame | StreamEnd> {
    const frame = this.frames.shift();
    if (frame !== undefined) return Promise.resolve(frame);
    if (this.ended) return Promise.resolve({ kind: 'end' });
    return new Promise((resolve) => {
      this.waiting = resolve;
    });
  }

  close(): void {
    if (this.ended) return;
    this.onClose();
    this.broke();
  }

  receive(message: MemberToClient): void {
    if (message.kind === 'frame') this.push(message.frame);
  }

  broke(): void {
    if (this.ended) return;
    this.ended = true;
    this.push({ kind: 'end' });
  }

  private push(frame: WatchFrame | StreamEnd): void {
    const waiting = this.waiting;
    this.waiting = undefined;
    if (waiting !== undefined) waiting(frame);
    else this.frames.push(frame);
  }
}

/** A keep-alive stream's client end: keep-alives by number, answered in any order. */
class SimLeaseStream implements LeaseStream, StreamEndpoint {
  nextSeq = 0;
  private readonly pending = new Map<number, (answer: KeepAliveAnswer) => void>();
  private n = 0;
  private closed = false;

  constructor(readonly id: string, readonly member: NodeId,
    private readonly sendKeepAlive: (n: number, leaseId: number) => void,
    private readonly onClose: () => void) {}

  get open(): boolean {
    return !this.closed;
  }

  keepAlive(leaseId: number): Promise<KeepAliveAnswer> {
    if (this.closed) return Promise.resolve({ kind: 'lost', detail: 'the stream is closed' });
    const n = ++this.n;
    return new Promise((resolve) => {
      this.pending.set(n, resolve);
      this.sendKeepAlive(n, leaseId);
    });
  }

  close(): void {
    if (this.closed) return;
    this.onClose();
    this.broke('closed by the client');
  }

  receive(message: MemberToClient): void {
    if (message.kind !== 'keepalive-answer') return;
    const resolve = this.pending.get(message.n);
    this.pending.delete(message.n);
    resolve?.(message.answer);
  }

  broke(detail: string): void {
    if (this.closed) return;
    this.closed = true;
    for (const resolve of this.pending.values()) resolve({ kind: 'lost', detail });
    this.pending.clear();
  }
}
