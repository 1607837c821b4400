/**
 * A recording of one simulated seed, for the dashboard's replay view (`conclave sim --record`,
 * `conclave replay`): what the nemesis did (crashes, restarts, pauses, partitions, network
 * faults, clock drift), every message sent with its fate (delivered when, or dropped), each
 * member's Raft role and term changes, client operations with their outcomes, and the checkers'
 * verdict. The simulator's parts write into it through `scheduler.recorder`; without a recorder
 * they write nothing and the run is unchanged (recording never draws from the seed's PRNG).
 *
 * Bounded: at most `messagesMax` messages (the rest are counted, not kept) and `eventsMax`
 * other events, so a long run cannot fill memory; `truncated` says what was cut.
 */

/** Kinds of recorded event other than messages. */
export type RecordedEvent =
  | { readonly kind: 'crash'; readonly atMs: number; readonly node: string }
  | { readonly kind: 'restart'; readonly atMs: number; readonly node: string }
  /** SIGCONT before a pause's own end (a directed scenario's resume). */
  | { readonly kind: 'resume'; readonly atMs: number; readonly node: string }
  | { readonly kind: 'pause'; readonly atMs: number; readonly node: string;
    readonly durationMs: number }
  | { readonly kind: 'drift'; readonly atMs: number; readonly node: string;
    readonly driftRate: number }
  /** Links cut now, as [from, to] pairs (one direction each). */
  | { readonly kind: 'partition'; readonly atMs: number; readonly links: readonly string[][] }
  | { readonly kind: 'heal'; readonly atMs: number }
  | { readonly kind: 'network'; readonly atMs: number; readonly lossRate: number;
    readonly latencyMsMax: number; readonly label: string }
  | { readonly kind: 'role'; readonly atMs: number; readonly node: string; readonly term: number;
    readonly from: string; readonly to: string; readonly reason: string }
  /** A client operation from its call to its return (endMs -1: no answer came). */
  | { readonly kind: 'client'; readonly atMs: number; readonly endMs: number;
    readonly client: string; readonly op: string; readonly outcome: string }
  | { readonly kind: 'violation'; readonly atMs: number; readonly checker: string;
    readonly message: string }
  | { readonly kind: 'note'; readonly atMs: number; readonly text: string }
  /**
   * News about a member's standing (gossip: the SWIM state some member took of `node`, noted
   * only when it differs from the last news of `node`; heartbeat: one observer's detector
   * suspecting `node` or trusting it again). `by`: who took that view.
   */
  | { readonly kind: 'member'; readonly atMs: number; readonly node: string;
    readonly state: string; readonly by: string; readonly incarnation?: number;
    readonly detector?: string }
  /**
   * The emergent leader (gossip), noted when the answer members give changes: `leader` is the
   * one every counted member names (with its generation), or undefined while they differ
   * (`answers`: the distinct answers, as `id@generation×count`).
   */
  | { readonly kind: 'leader'; readonly atMs: number; readonly leader: string | undefined;
    readonly generation: number; readonly answers: string }
  /** A fault the nemesis chose, by ordinal (the replay view can switch it off and rerun). */
  | { readonly kind: 'fault'; readonly atMs: number; readonly ordinal: number;
    readonly label: string; readonly skipped: boolean };

/**
 * One message: [sentAtMs, from, to, label, deliveredAtMs or -1 when dropped]. Arrays, not
 * objects: a run sends tens of thousands, and the file stays a few MB.
 */
export type RecordedMessage = [number, string, string, string, number];

/** What `conclave sim --record FILE` writes (JSON). */
export interface SimRecording {
  readonly format: 'conclave-sim-recording';
  readonly version: 1;
  readonly scenario: string;
  readonly seed: number;
  readonly options: Readonly<Record<string, number | boolean | string | undefined>>;
  readonly nodes: readonly string[];
  readonly traceHash: string;
  readonly simulatedMs: number;
  readonly events: readonly RecordedEvent[];
  readonly messages: readonly RecordedMessage[];
  readonly truncated: { readonly messages: number; readonly events: number };
  readonly violations: readonly { checker: string; atMs: number; message: string }[];
  /**
   * The cluster's members, when the scenario names them (lease, core: the others in `nodes`
   * are clients), so the view draws members and clients apart.
   */
  readonly members?: readonly string[];
  /** The fault the user switched off before this rerun (replay view), if any. */
  readonly skippedFaults?: readonly number[];
}

export interface SimRecorderLimits {
  /** Messages kept. Unit: messages. Default: 200,000 (about 10 MB of JSON). */
  readonly messagesMax: number;
  /** Other events kept. Unit: events. Default: 50,000. */
  readonly eventsMax: number;
}

export const SIM_RECORDER_DEFAULTS: SimRecorderLimits = { messagesMax: 200_000, eventsMax: 50_000 };

export class SimRecorder {
  readonly events: RecordedEvent[] = [];
  readonly messages: RecordedMessage[] = [];
  readonly nodes = new Set<string>();
  /** The members, when the scenario says which nodes are (see SimRecording.members). */
  members: readonly string[] | undefined;
  private readonly truncatedCounts = { messages: 0, events: 0 };
  /** Ordinal of each fault the nemesis injects; faults listed in `skipFaults` are not applied. */
  private faultOrdinal = 0;

  constructor(private readonly limits: SimRecorderLimits = SIM_RECORDER_DEFAULTS,
    private readonly skipFaults: ReadonlySet<number> = new Set()) {}

  note(event: RecordedEvent): void {
    if ('node' in event) this.nodes.add(event.node);
    if (this.events.length >= this.limits.eventsMax) {
      this.truncatedCounts.events++;
      return;
    }
    this.events.push(event);
  }

  /** A message sent; returns its record so the delivery can fill in the arrival time. */
  sent(atMs: number, from: string, to: string, label: string): RecordedMessage | undefined {
    // A node that never crashed or changed role is known by its messages.
    this.nodes.add(from);
    this.nodes.add(to);
    if (this.messages.length >= this.limits.messagesMax) {
      this.truncatedCounts.messages++;
      return undefined;
    }
    const record: RecordedMessage = [atMs, from, to, label, -1];
    this.messages.push(record);
    return record;
  }

  /**
   * The nemesis asks before each fault: false means "skip this one" (the replay view's "what
   * if"). The fault's random draws are made either way, so later faults stay the same.
   */
  allowFault(atMs: number, label: string): boolean {
    const ordinal = this.faultOrdinal++;
    const skipped = this.skipFaults.has(ordinal);
    this.note({ kind: 'fault', atMs, ordinal, label, skipped });
    return !skipped;
  }

  get truncated(): { messages: number; events: number } {
    return { ...this.truncatedCounts };
  }

  recording(head: Pick<SimRecording, 'scenario' | 'seed' | 'options' | 'traceHash' |
    'simulatedMs' | 'violations'>): SimRecording {
    // Past the events' bound too: the verdict is what a recording is for, and there are few.
    for (const v of head.violations) {
      this.events.push({ kind: 'violation', atMs: v.atMs, checker: v.checker,
        message: v.message });
    }
    return {
      format: 'conclave-sim-recording', version: 1, ...head,
      nodes: [...this.nodes].sort(naturalOrder),
      events: this.events, messages: this.messages, truncated: this.truncated,
      ...(this.members === undefined ? {} : { members: [...this.members] }),
      ...(this.skipFaults.size > 0 ? { skippedFaults: [...this.skipFaults] } : {}),
    };
  }
}

function naturalOrder(a: string, b: string): number {
  return a.localeCompare(b, 'en', { numeric: true });
}

/** Checks that `value` looks like a SimRecording (the replay command reads files). */
export function recordingProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return 'not a JSON object';
  const r = value as Record<string, unknown>;
  if (r['format'] !== 'conclave-sim-recording') return 'format is not conclave-sim-recording';
  if (r['version'] !== 1) return `version ${String(r['version'])} is not 1`;
  if (typeof r['scenario'] !== 'string' || typeof r['seed'] !== 'number') {
    return 'scenario or seed missing';
  }
  for (const field of ['events', 'messages', 'nodes', 'violations']) {
    if (!Array.isArray(r[field])) return `${field} is not a list`;
  }
  return undefined;
}
