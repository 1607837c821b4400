/**
 * The holder process of bench/tools/handover.ts: campaigns in one election on the backend
 * named, prints `elected <fencingToken> <term>` once it leads, and then only holds (keeping its
 * lease alive) until it is killed.
 *
 *   node --import tsx bench/tools/handover-holder.ts <conclave|etcd> <endpoints> <name> <ttlMs>
 */
import { connect } from '../../src/client/index.js';

const [backend, endpointList, name, ttlText] = process.argv.slice(2);
if (backend === undefined || endpointList === undefined || name === undefined
  || ttlText === undefined) {
  console.error('usage: handover-holder <conclave|etcd> <endpoints> <name> <ttlMs>');
  process.exit(2);
}
const endpoints = endpointList.split(',');
const client = backend === 'etcd' ? connect({ backend: 'etcd', endpoints })
  : connect({ endpoints });
const leadership = await client.election(name).campaign('holder', { ttlMs: Number(ttlText) });
console.log(`elected ${leadership.fencingToken} ${leadership.term}`);
leadership.signal.addEventListener('abort', () => {
  console.log(`lost ${String(leadership.signal.reason)}`);
  process.exit(1);
});
