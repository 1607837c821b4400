/**
 * Keys: browse by prefix, a key's history (create and mod revision, version, each change),
 * and a live watch of a prefix, all answered by the serving member over the page's feed.
 */
import type { ChangeRow, KeyRow } from '../cluster-view.js';
import { fill, h } from './dom.js';

export interface FeedRequests {
  request(message: Record<string, unknown>): Promise<Record<string, unknown>>;
}

const WATCH_LINES_MAX = 200;

export class KeysTab {
  private readonly list = h('div.key-list');
  private readonly history = h('div.key-history');
  private readonly watchLog = h('div.watch-log');
  private readonly prefixInput = h('input', { type: 'text', value: '', placeholder: 'prefix',
    'data-testid': 'prefix' });
  private watching: string | undefined;

  constructor(panel: Element, private readonly feed: FeedRequests) {
    const browse = h('button', { onclick: () => void this.browse() }, 'Browse');
    const watch = h('button', { onclick: () => void this.toggleWatch() }, 'Watch prefix');
    fill(panel, h('div.row', {}, this.prefixInput, browse, watch), this.list,
      h('h3', {}, 'History'), this.history, h('h3', {}, 'Watch'), this.watchLog);
    void this.browse();
  }

  onWatchChanges(changes: readonly ChangeRow[]): void {
    for (const change of changes) {
      this.watchLog.prepend(h('div', {}, `${change.type} ${change.kv.key} = ${change.kv.value} ` +
        `(mod ${change.kv.modRevision}, version ${change.kv.version})`));
    }
    while (this.watchLog.childElementCount > WATCH_LINES_MAX) {
      this.watchLog.lastElementChild?.remove();
    }
  }

  private async browse(): Promise<void> {
    const reply = await this.feed.request({ type: 'keys', prefix: this.prefixInput.value });
    const rows = (reply['rows'] ?? []) as KeyRow[];
    fill(this.list, h('p.muted', {}, `${String(reply['count'] ?? 0)} keys at revision ` +
      `${String(reply['revision'] ?? '?')}` + (rows.length < Number(reply['count'] ?? 0)
      ? `, first ${rows.length} shown` : '')),
    h('table', {}, h('thead', {}, h('tr', {}, ...['key', 'value', 'create', 'mod', 'version',
      'lease'].map((t) => h('th', {}, t)))),
    h('tbody', {}, ...rows.map((row) => h('tr', {},
      h('td', {}, h('a', { href: '#', onclick: (e: Event) => {
        e.preventDefault();
        void this.showHistory(row.key);
      } }, row.key)),
      h('td', {}, row.value + (row.valueLength > row.value.length ? '…' : '')),
      h('td', {}, row.createRevision), h('td', {}, row.modRevision), h('td', {}, row.version),
      h('td', {}, row.lease === null ? '–' : row.lease.toString(16)))))));
  }

  private async showHistory(key: string): Promise<void> {
    const reply = await this.feed.request({ type: 'key-history', key });
    const changes = (reply['changes'] ?? []) as ChangeRow[];
    fill(this.history, h('p', {}, `${key}: ${changes.length} changes kept` +
      (reply['compacted'] === true ? ' (older ones compacted)' : '')),
    ...changes.map((c) => h('div', {}, `${c.type} at revision ${c.kv.modRevision}: ` +
      `${c.kv.value} (created ${c.kv.createRevision}, version ${c.kv.version})`)));
  }

  private async toggleWatch(): Promise<void> {
    if (this.watching !== undefined) {
      await this.feed.request({ type: 'unwatch' });
      this.watchLog.prepend(h('div.muted', {}, `stopped watching "${this.watching}"`));
      this.watching = undefined;
      return;
    }
    this.watching = this.prefixInput.value;
    const reply = await this.feed.request({ type: 'watch', prefix: this.watching });
    this.watchLog.prepend(h('div.muted', {}, `watching "${this.watching}" from revision ` +
      `${String(reply['fromRevision'])}`));
  }
}
