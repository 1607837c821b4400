/**
 * The child of stream-kill9.test.ts: a stream client (StreamClientTransport, the default
 * transport of connect()) that sends batches of stamped puts to ENDPOINT, one WebSocket
 * message per batch. Batch b puts `k/<b>/<i>` = `v<b>.<i>` with idempotency key
 * (`kill9.<i>`, sequence b). Prints `sent <b>` before each batch and `acked <b> <n>` as each
 * answer comes; runs until it is killed.
 */
import { StreamClientTransport } from '../../src/adapters/stream-client-transport.js';

const [endpoint, widthText] = process.argv.slice(2);
const width = Number(widthText);
const transport = new StreamClientTransport();

for (let batch = 1; ; batch++) {
  process.stdout.write(`sent ${batch}\n`);
  let acked = 0;
  await Promise.all(Array.from({ length: width }, async (_, i) => {
    const answer = await transport.call(String(endpoint), { kind: 'put', key: `k/${batch}/${i}`,
      value: `v${batch}.${i}`, clientId: `kill9.${i}`, sequence: batch });
    if (answer.kind !== 'ok') throw new Error(`batch ${batch} put ${i}: ${JSON.stringify(answer)}`);
    acked += 1;
    process.stdout.write(`acked ${batch} ${acked}\n`);
  }));
}
