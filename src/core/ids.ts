/**
 * Branded identifiers: numbers and strings that must not be mixed up (an index is not a term,
 * a node id is not an address). Brands cost nothing at run time.
 */

declare const brand: unique symbol;
/** `T` tagged with `B` so that two kinds of id with one representation cannot be confused. */
export type Brand<T, B extends string> = T & { readonly [brand]: B };

/** A cluster member's stable name, for example `n1`. */
export type NodeId = Brand<string, 'NodeId'>;
/** Raft's generation clock: grows with each election, persisted before it is used. */
export type Term = Brand<number, 'Term'>;
/** A position in the replicated log; 0 means "before the first entry". */
export type LogIndex = Brand<number, 'LogIndex'>;
/** A number handed out with a leadership or lock that only grows; resources reject lower ones. */
export type FencingToken = Brand<number, 'FencingToken'>;
/** SWIM's per-member counter that only the member itself raises, to refute suspicion. */
export type Incarnation = Brand<number, 'Incarnation'>;
/** A generation clock value other than Raft's term (for example the emergent coordinator's). */
export type Generation = Brand<number, 'Generation'>;

export const nodeId = (value: string): NodeId => value as NodeId;
export const term = (value: number): Term => value as Term;
export const logIndex = (value: number): LogIndex => value as LogIndex;
export const fencingToken = (value: number): FencingToken => value as FencingToken;
export const incarnation = (value: number): Incarnation => value as Incarnation;
export const generation = (value: number): Generation => value as Generation;
