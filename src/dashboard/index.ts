/**
 * The dashboard (docs/dashboard.md): a page every member serves at /ui on its client port,
 * fed live over one WebSocket from this member, which gathers its peers' event feeds
 * server-side; the gossip membership tab (`conclave gossip --ui`); and the simulator's replay
 * view (`conclave replay`). The Node side lives here; the page itself in web/ (bundled by
 * esbuild into dist/dashboard). It only subscribes to events and reads public status and the
 * store, never a core's insides (DESIGN.md §4). Read-only: auth is not built yet.
 *
 *   const server = await startServer(config, logger, dashboardAddOn);
 *   // open server.clientUrl + '/ui/'
 */
import type { ServerAddOn, ServerAddOnContext } from '../server/server.js';
import { Dashboard } from './dashboard.js';

export { Dashboard } from './dashboard.js';

/** The dashboard as `startServer`'s add-on. */
export function dashboardAddOn(context: ServerAddOnContext): ServerAddOn {
  return new Dashboard({
    memberId: context.config.name, feed: context.feed, store: context.core.store,
    clientUrls: context.clientUrls, tls: context.peerClientTls,
    logger: context.logger.child({ component: 'dashboard' }),
    heartbeatMs: context.config.heartbeatMs, electionTimeoutMs: context.config.electionTimeoutMs,
  });
}
