/**
 * The hostile actor of `conclave sim --scenario gossip --hostile`: a forger of SWIM messages
 * without the keyring (unauthenticated: it claims any id, a member's, the receiver's own, or a
 * stranger's), on its own link to the members. It sends every message kind carrying what no
 * correct member could send and the receiver can tell from what it knows (plausibility.ts):
 * incarnations, ages and generations at 2^40 + 1, 2^53 − 1, or just past the step bounds;
 * accusations of the receiver above its own incarnation; an `alive` lowering a member's age;
 * a stranger claiming to be older than the leader (age 0); push-pulls and join-acks with claims
 * out of reach. A share is malformed (negative, fractional, unknown kinds, throwing getters):
 * those go through `validateSwimMessage`, as at the real adapter, and are dropped there.
 *
 * Every checker of the scenario must hold meanwhile: no false death beyond the bound, the same
 * view and leader everywhere after each phase. What it does not send: well-formed news within
 * the bounds (a `dead` at a member's current incarnation, a stranger younger than the leader,
 * floods of joins). Without the keyring those are indistinguishable from a member's own (the
 * admission rate bounds the floods: see its unit tests); with the keyring a forger without the
 * key cannot send anything at all (test/adapters/gossip-keyring.test.ts), so in the
 * authenticated model this actor has no voice.
 */
import { nodeId, type NodeId } from '../../../core/ids.js';
import { randomChance, randomInt } from '../../../core/random.js';
import {
  SWIM_ACCUSATION_STEP_MAX, SWIM_AGE_STEP_MAX, SWIM_GENERATION_STEP_MAX,
  SWIM_INCARNATION_STEP_MAX, SWIM_VALUE_MAX,
  validateSwimMessage, type SwimMessage, type SwimStatus,
} from '../../../core/swim/index.js';
import type { Prng } from '../../prng.js';
import type { SimNetwork } from '../../sim-network.js';

/** Ids the forger claims for strangers: never a member of the plan. */
export const FORGED_MEMBER_PREFIX = 'forged-';

export interface GossipHostileCounts {
  sent: number;
  malformed: number;
}

/** What the actor reads of a running member (it is the simulator: omniscient). */
export interface GossipHostileView {
  status(): SwimStatus;
  member(id: NodeId): { readonly incarnation: number; readonly age: number } | undefined;
}

export class GossipHostileActor {
  readonly counts: GossipHostileCounts = { sent: 0, malformed: 0 };

  constructor(private readonly prng: Prng, private readonly network: SimNetwork<SwimMessage>,
    private readonly members: () => readonly NodeId[],
    private readonly view: (id: NodeId) => GossipHostileView | undefined) {}

  act(): void {
    const up = this.members().filter((id) => this.view(id) !== undefined);
    if (up.length === 0) return;
    const receiver = this.pick(up);
    const view = this.view(receiver) as GossipHostileView;
    const from = randomChance(this.prng, 0.3) ? receiver : this.pick(up);
    const value = randomChance(this.prng, 0.1) ? this.malformed() : this.forged(receiver, view);
    const checked = validateSwimMessage(value);
    if (!checked.ok) {
      this.counts.malformed++;
      return;
    }
    this.counts.sent++;
    this.network.inject(from, receiver, checked.message);
  }

  /**
   * A flood of `count` joins under fresh ids (`forged-join-…`), each to the next live member:
   * well-formed and within the admission budget, so they are admitted; nobody answers at
   * their address, so every member then declares them dead (`--join-flood`).
   */
  joinFlood(count: number): void {
    const up = this.members().filter((id) => this.view(id) !== undefined);
    if (up.length === 0) return;
    for (let i = 0; i < count; i++) {
      const receiver = up[i % up.length] as NodeId;
      const forged = nodeId(`${FORGED_MEMBER_PREFIX}join-${i}`);
      const checked = validateSwimMessage({ kind: 'join', address: `nowhere-${i}` });
      if (!checked.ok) continue;
      this.counts.sent++;
      this.network.inject(forged, receiver, checked.message);
    }
  }

  /** Plain values: branded types are given by `validateSwimMessage`, as at the adapter. */
  private forged(receiver: NodeId, view: GossipHostileView): unknown {
    const status = view.status();
    const update = this.implausible(receiver, view, status);
    const claim = { generation: this.pick([SWIM_VALUE_MAX + 1, 2 ** 53 - 1,
      status.generationMax + SWIM_GENERATION_STEP_MAX + 1 + randomInt(this.prng, 0, 1000)]),
    by: this.pick(this.members()) };
    const seq = this.pick([0, 1, 2 ** 31, 2 ** 53 - 1]);
    switch (randomInt(this.prng, 0, 7)) {
      case 0: return { kind: 'ping', seq, target: receiver, updates: [update] };
      case 1: return { kind: 'ack', seq, updates: [update] };
      case 2:
        return { kind: 'ping-req', seq, target: this.pick(this.members()), updates: [update] };
      case 3: return { kind: 'nack', seq, updates: [update] };
      case 4:
        return { kind: 'gossip', updates: [update, this.implausible(receiver, view, status)] };
      case 5: return { kind: 'push-pull', reply: randomChance(this.prng, 0.5),
        acting: randomChance(this.prng, 0.5), claim, members: [update] };
      default: return { kind: 'join-ack', age: 2 ** 53 - 1, incarnation: 2 ** 53 - 1, claim,
        members: [update], stable: [] };
    }
  }

  /** One update that the bounds must refuse (see the module comment). */
  private implausible(receiver: NodeId, view: GossipHostileView, s: SwimStatus): unknown {
    const about = this.pick(this.members());
    const known = view.member(about) ?? { incarnation: 0, age: 0 };
    const state = this.pick(['alive', 'suspect', 'dead', 'left'] as const);
    const ages = s.age ?? 0;
    switch (randomInt(this.prng, 0, 6)) {
      case 0: // far out of range
        return { member: about, state, incarnation: this.pick([SWIM_VALUE_MAX + 1, 2 ** 53 - 1]),
          age: known.age };
      case 1: // just past the incarnation step (half of it for accusations and self news)
        return { member: about, state, age: known.age,
          incarnation: known.incarnation + 1 + randomInt(this.prng, 0, 1000)
            + (state === 'alive' && about !== receiver
              ? SWIM_INCARNATION_STEP_MAX : SWIM_ACCUSATION_STEP_MAX) };
      case 2: // the receiver accused far above its own incarnation
        return { member: receiver, state: this.pick(['suspect', 'dead'] as const), age: ages,
          incarnation: s.incarnation + SWIM_ACCUSATION_STEP_MAX + 1, by: about };
      case 3: // a member made older than it is
        return { member: about, state: 'alive', incarnation: known.incarnation + 1,
          age: Math.max(0, known.age - 1 - randomInt(this.prng, 0, 3)), address: about };
      case 4: // a stranger older than everyone
        return { member: nodeId(`${FORGED_MEMBER_PREFIX}${randomInt(this.prng, 0, 1000)}`),
          state: 'alive', incarnation: 1, age: 0, address: 'nowhere' };
      default: // a generation out of reach, or an age far past every admission
        return randomChance(this.prng, 0.5)
          ? { member: about, state: 'alive', incarnation: known.incarnation + 1, age: known.age,
            generation: s.generationMax + SWIM_GENERATION_STEP_MAX + 1, address: about }
          : { member: nodeId(`${FORGED_MEMBER_PREFIX}young`), state: 'alive', incarnation: 1,
            age: ages + SWIM_AGE_STEP_MAX * 4, address: 'nowhere' };
    }
  }

  private malformed(): unknown {
    return this.pick<() => unknown>([
      () => ({ kind: 'gossip',
        updates: [{ member: 'n1', state: 'dead', incarnation: -1, age: 0 }] }),
      () => ({ kind: 'gossip', updates: [{ member: 'n1', state: 'alive', incarnation: 0.5,
        age: 0 }] }),
      () => ({ kind: 'ping', seq: 2 ** 53, target: 'n1', updates: [] }),
      () => ({ kind: 'forged-kind' }),
      () => ({ kind: 'push-pull', reply: 'yes', acting: true, claim: { generation: 0 },
        members: [] }),
      () => ({ kind: 'gossip', updates: new Array(300).fill({ member: 'n1', state: 'alive',
        incarnation: 1, age: 1 }) }),
      () => Object.defineProperty({ kind: 'ack', updates: [] }, 'seq', {
        get: () => { throw new Error('hostile getter'); }, enumerable: true }),
      () => null,
    ])();
  }

  private pick<T>(items: readonly T[]): T {
    return items[randomInt(this.prng, 0, items.length)] as T;
  }
}
