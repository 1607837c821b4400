/**
 * Goal: the campaign state machine decides as docs/elections.md says — ordered by create
 * revision, each candidate waits on its predecessor only, and no success is ever reported once
 * the lease's local deadline has passed or the candidate's key is gone.
 * Method: drive Campaign by hand with scripted store answers; a fast-check property runs random
 * candidate sets and checks exactly one of them (the lowest create revision) may claim.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  Campaign, candidateKey, electionLeader, recipeKeys, type CampaignAction, type CampaignConfig,
} from '../../../src/core/election/index.js';

const keys = recipeKeys('election', 'billing');
const alive = { nowMs: 1_000, leaseDeadlineMs: 5_000 };
const expired = { nowMs: 6_000, leaseDeadlineMs: 5_000 };

function campaign(leaseId: number, extra: Partial<CampaignConfig> = {}): Campaign {
  return new Campaign({ keys, leaseId, value: `c${leaseId}`, leaseTtlMs: 6_000,
    clockRateErrorMax: 0.01, leaseMarginMs: 200, ...extra });
}

function entry(leaseId: number, createRevision: number): { key: string; createRevision: number } {
  return { key: candidateKey(keys, leaseId), createRevision };
}

describe('election: campaign', () => {
  test('a lone candidate creates its key, scans, claims and is elected with its create revision', () => {
    const c = campaign(7);
    const create = c.start();
    assert.deepEqual(create, { kind: 'create', key: candidateKey(keys, 7), value: 'c7', leaseId: 7 });
    assert.deepEqual(c.onCreated(12, alive), { kind: 'scan', prefix: keys.candidatePrefix });
    const claim = c.onScanned([entry(7, 12)], 12, alive);
    assert.equal(claim.kind, 'claim');
    assert.deepEqual(c.onClaimed(3, alive), { kind: 'elected', key: candidateKey(keys, 7),
      fencingToken: 12, term: 3, holdUntilMs: 5_000 });
    assert.equal(c.phase, 'elected');
  });

  test('a candidate waits on the key just before its own, not on the leader', () => {
    const c = campaign(9);
    c.start();
    c.onCreated(30, alive);
    const action = c.onScanned([entry(1, 10), entry(5, 20), entry(9, 30), entry(11, 40)], 40, alive);
    assert.deepEqual(action, { kind: 'wait-deleted', key: candidateKey(keys, 5), afterRevision: 40 });
  });

  test('after the predecessor goes it scans again and waits on an earlier one still there', () => {
    const c = campaign(9);
    c.start();
    c.onCreated(30, alive);
    c.onScanned([entry(1, 10), entry(5, 20), entry(9, 30)], 30, alive);
    assert.deepEqual(c.onPredecessorDeleted(alive), { kind: 'scan', prefix: keys.candidatePrefix });
    const action = c.onScanned([entry(1, 10), entry(9, 30)], 31, alive);
    assert.deepEqual(action, { kind: 'wait-deleted', key: candidateKey(keys, 1), afterRevision: 31 });
  });

  test('a candidate whose own key is gone loses instead of claiming', () => {
    const c = campaign(9);
    c.start();
    c.onCreated(30, alive);
    const action = c.onScanned([entry(11, 40)], 41, alive);
    assert.equal(action.kind, 'lost');
    assert.equal((action as Extract<CampaignAction, { kind: 'lost' }>).reason, 'key-deleted');
  });

  test('a key re-created by another lease holder at a new revision is not ours', () => {
    const c = campaign(9);
    c.start();
    c.onCreated(30, alive);
    assert.equal(c.onScanned([entry(9, 55)], 55, alive).kind, 'lost');
  });

  test('no step reports success once the lease deadline has passed', () => {
    const c1 = campaign(3);
    c1.start();
    assert.equal(c1.onCreated(4, expired).kind, 'lost');
    const c2 = campaign(3);
    c2.start();
    c2.onCreated(4, alive);
    c2.onScanned([entry(3, 4)], 4, alive);
    const late = c2.onClaimed(1, expired);
    assert.deepEqual(late.kind, 'lost');
    const c3 = campaign(3);
    c3.start();
    c3.onCreated(4, alive);
    c3.onScanned([entry(2, 3), entry(3, 4)], 4, alive);
    assert.equal(c3.onPredecessorDeleted(expired).kind, 'lost');
  });

  test('a refused claim loses', () => {
    const c = campaign(3);
    c.start();
    c.onCreated(4, alive);
    c.onScanned([entry(3, 4)], 4, alive);
    assert.equal(c.onClaimed(undefined, alive).kind, 'lost');
  });

  test('a lease that ends while waiting ends the campaign; reporting it twice is harmless', () => {
    const c = campaign(3);
    c.start();
    c.onCreated(4, alive);
    c.onScanned([entry(2, 3), entry(3, 4)], 4, alive);
    assert.equal(c.onLost('lease-ended', 'deadline')?.kind, 'lost');
    assert.equal(c.onLost('lease-ended', 'deadline'), undefined);
  });

  test('calls out of order fail fast naming the phase', () => {
    const c = campaign(3);
    assert.throws(() => c.onCreated(4, alive), /onCreated in phase idle, expected creating/);
  });

  test('mutant claimWithoutLeaseRecheck: elected on the predecessor delete with a fresh deadline', () => {
    const c = campaign(3, { mutants: ['claimWithoutLeaseRecheck'] });
    c.start();
    c.onCreated(4, alive);
    c.onScanned([entry(2, 3), entry(3, 4)], 4, alive);
    assert.equal(c.onLost('lease-ended', 'deadline'), undefined);
    const action = c.onPredecessorDeleted(expired);
    assert.equal(action.kind, 'elected');
    assert.ok((action as Extract<CampaignAction, { kind: 'elected' }>).holdUntilMs > expired.nowMs);
  });

  test('property: of any candidate set exactly the lowest create revision claims', () => {
    fc.assert(fc.property(fc.uniqueArray(fc.integer({ min: 1, max: 10_000 }),
      { minLength: 1, maxLength: 12 }), (revisions) => {
      const entries = revisions.map((r, i) => entry(i + 1, r));
      const claimers = entries.filter((e, i) => {
        const c = campaign(i + 1);
        c.start();
        c.onCreated(e.createRevision, alive);
        return c.onScanned(entries, 10_000, alive).kind === 'claim';
      });
      assert.equal(claimers.length, 1);
      assert.equal(claimers[0], electionLeader(entries));
    }));
  });
});
