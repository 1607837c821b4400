/**
 * The page: one WebSocket to the member that served it (/ui/feed), whose first frame says the
 * mode — a live cluster (`conclave server`/`dev`), a gossip member (`conclave gossip --ui`) or
 * a recorded simulation (`conclave replay`) — and so which tabs show. Views redraw at most
 * four times a second and only the tab in view, so a busy feed never stalls the page.
 */
import { RecipesView, renderCluster, renderLeadership } from './cluster-tabs.js';
import { fill, h } from './dom.js';
import { GossipTab } from './gossip-tab.js';
import { KeysTab } from './keys-tab.js';
import { ReplayTab } from './replay-tab.js';
import { ClusterState } from './state.js';
import { ThroughputTab } from './throughput-tab.js';

interface Tab {
  readonly id: string;
  readonly title: string;
  readonly panel: HTMLElement;
  render?(): void;
}

const REDRAW_INTERVAL_MS = 250;

class Page {
  private readonly state = new ClusterState();
  private tabs: Tab[] = [];
  private current: Tab | undefined;
  private socket: WebSocket | undefined;
  private requestId = 1;
  private readonly pending = new Map<number, (reply: Record<string, unknown>) => void>();
  private keys: KeysTab | undefined;
  private replay: ReplayTab | undefined;
  private gossip: GossipTab | undefined;
  private mode: string | undefined;
  private readonly status = h('span.status', { 'data-testid': 'connection' }, 'connecting…');

  start(): void {
    document.body.append(h('header', {}, h('h1', {}, 'Conclave'), h('nav'), this.status),
      h('main'));
    this.connect();
    setInterval(() => this.redraw(), REDRAW_INTERVAL_MS);
  }

  request(message: Record<string, unknown>): Promise<Record<string, unknown>> {
    const id = this.requestId++;
    this.socket?.send(JSON.stringify({ ...message, id }));
    return new Promise((resolve) => this.pending.set(id, resolve));
  }

  /**
   * Feeds to try, in order: the member that served the page, then the others it named (when
   * the serving member dies, the page moves to the next one; still one connection at a time).
   */
  private feedUrls: string[] = [];
  private feedIndex = 0;

  private connect(): void {
    const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
    const url = this.feedUrls[this.feedIndex % Math.max(1, this.feedUrls.length)] ??
      `${scheme}//${location.host}/ui/feed`;
    const socket = new WebSocket(url);
    this.socket = socket;
    socket.onopen = () => {
      this.status.textContent = `live (${new URL(url).host})`;
      // A new feed knows nothing of the tab in view.
      if (this.current !== undefined) this.sayView(this.current);
    };
    socket.onmessage = (message) => this.onMessage(String(message.data));
    socket.onclose = () => {
      this.status.textContent = 'disconnected: trying the next member…';
      this.status.className = 'status down';
      this.feedIndex++;
      setTimeout(() => this.connect(), this.feedUrls.length > 1 ? 200 : 1000);
    };
  }

  /** One message holds one frame or several, one a line (the member sends a window's worth). */
  private onMessage(text: string): void {
    for (const line of text.split('\n')) {
      let frame: Record<string, unknown>;
      try {
        frame = JSON.parse(line) as Record<string, unknown>;
      } catch {
        continue;
      }
      this.onFrame(frame);
    }
  }

  private onFrame(frame: Record<string, unknown>): void {
    const type = frame['type'];
    if (type === 'hello') {
      this.noteFeeds(frame['clientUrls'] as Record<string, string> | undefined);
      this.setMode(String(frame['mode'] ?? 'cluster'), frame);
    }
    if (type === 'reply') {
      const id = frame['id'] as number;
      this.pending.get(id)?.(frame);
      this.pending.delete(id);
      return;
    }
    if (type === 'watch-changes') return this.keys?.onWatchChanges(frame['changes'] as never);
    if (type === 'recording') return this.replay?.load(frame['recording'] as never);
    if (type === 'gossip' || type === 'gossip-event') return this.gossip?.apply(frame);
    // Only a live cluster's frames build the cluster state (a replay's or gossip member's
    // hello names no Raft members).
    if (this.mode === 'cluster') this.state.apply(frame);
  }

  private noteFeeds(clientUrls: Record<string, string> | undefined): void {
    if (clientUrls === undefined || this.feedUrls.length > 0) return;
    const here = `${location.protocol}//${location.host}`;
    const urls = Object.values(clientUrls).map((u) => u.replace(/\/$/, ''));
    const ordered = [here, ...urls.filter((u) => u !== here)];
    this.feedUrls = ordered.map((u) => `${u.replace(/^http/, 'ws')}/ui/feed`);
    this.feedIndex = 0;
  }

  private setMode(mode: string, hello: Record<string, unknown>): void {
    this.status.className = 'status';
    if (this.mode === mode) return;
    this.mode = mode;
    const main = document.querySelector('main')!;
    const panel = (): HTMLElement => h('section.panel');
    if (mode === 'replay') {
      const replayPanel = panel();
      this.replay = new ReplayTab(replayPanel);
      this.tabs = [{ id: 'replay', title: 'Replay', panel: replayPanel }];
    } else if (mode === 'gossip') {
      const gossipPanel = panel();
      this.gossip = new GossipTab(gossipPanel, String(hello['self'] ?? ''));
      this.tabs = [{ id: 'membership', title: 'Membership', panel: gossipPanel,
        render: () => this.gossip?.render() }];
    } else {
      this.tabs = this.clusterTabs(panel);
    }
    fill(main, ...this.tabs.map((t) => t.panel));
    fill(document.querySelector('nav')!, ...this.tabs.map((t) => h('a', {
      href: `#${t.id}`, 'data-tab': t.id, onclick: () => this.show(t) }, t.title)));
    const wanted = this.tabs.find((t) => `#${t.id}` === location.hash) ?? this.tabs[0]!;
    this.show(wanted);
  }

  private clusterTabs(panel: () => HTMLElement): Tab[] {
    const state = this.state;
    const [cluster, leadership, recipes, keys, throughput, replay] =
      [panel(), panel(), panel(), panel(), panel(), panel()];
    const chart = new ThroughputTab(throughput);
    this.replay = new ReplayTab(replay);
    const recipesView = new RecipesView(recipes);
    return [
      { id: 'cluster', title: 'Cluster', panel: cluster,
        render: () => renderCluster(cluster, state) },
      { id: 'leadership', title: 'Why leadership moved', panel: leadership,
        render: () => renderLeadership(leadership, state) },
      { id: 'recipes', title: 'Elections, locks, leases', panel: recipes,
        render: () => recipesView.render(state) },
      { id: 'keys', title: 'Keys', panel: keys, render: () => {
        this.keys ??= new KeysTab(keys, this);
      } },
      { id: 'throughput', title: 'Throughput', panel: throughput,
        render: () => chart.render(state) },
      { id: 'replay', title: 'Replay a seed', panel: replay },
    ];
  }

  private show(tab: Tab): void {
    const leasesBefore = this.current?.id === 'recipes';
    this.current = tab;
    if (leasesBefore && tab.id !== 'recipes') this.state.dropLeases();
    this.sayView(tab);
    for (const t of this.tabs) t.panel.hidden = t !== tab;
    document.querySelectorAll('nav a').forEach((a) =>
      a.classList.toggle('active', a.getAttribute('data-tab') === tab.id));
    tab.render?.();
  }

  /** Tells the member whether the tab in view shows the leases (they are sent only then). */
  private sayView(tab: Tab): void {
    if (this.mode !== 'cluster' || this.socket?.readyState !== WebSocket.OPEN) return;
    void this.request({ type: 'view', leases: tab.id === 'recipes' });
  }

  private redraw(): void {
    this.current?.render?.();
  }
}

new Page().start();
