/**
 * @packageDocumentation
 * The SWIM runtime: a `SwimMember` (gossip membership with Lifeguard and the emergent leader,
 * `src/core/swim`) driven through the ports. It validates every inbound message, sends what
 * the member produced on the right channel (datagram or stream), publishes the membership
 * events, and keeps one timer armed at the member's next deadline. The same code runs over
 * the real UDP/TCP adapters and in the simulator (`conclave sim --scenario gossip`).
 *
 * Invariants:
 * - every input (join, leave, message, timer) is followed by one drain: nothing the member
 *   produced waits for the next input;
 * - at most one timer is armed, never later than the member's next deadline;
 * - an invalid message never reaches the member and never throws: it is counted in
 *   `status().invalidMessagesDropped`;
 * - after `stop()` nothing is sent, ticked or published.
 *
 * @example
 * ```ts
 * import { SwimRuntime } from './runtime/swim/index.js';
 * import { SWIM_DEFAULTS_LAN } from './core/swim/index.js';
 *
 * const runtime = new SwimRuntime(
 *   { id: nodeId('n2'), address: '10.0.0.2:7946', config: SWIM_DEFAULTS_LAN },
 *   { clock, timer, transport, random, onEvent: (e) => log.info(e, e.kind) },
 * );
 * runtime.join([nodeId('n1')]);
 * const unsubscribe = runtime.subscribe((e) => {
 *   if (e.kind === 'leader-changed') console.log('coordinator', e.leader);
 * });
 * runtime.leader();      // { id: 'n1', generation: 1 } once known
 * runtime.leave();       // later; stop() once runtime.idle
 * ```
 */
export {
  SwimRuntime,
  type SwimEventListener,
  type SwimRuntimeComponents,
  type SwimRuntimeOptions,
  type SwimRuntimeStatus,
} from './swim-runtime.js';
