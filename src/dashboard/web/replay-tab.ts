/**
 * Replay: a recorded seed (`conclave replay run.json`, a file opened here, or a seed run right
 * here by the simulator bundled for the browser) drawn at virtual time t — nodes with their
 * role and term, messages in flight, cut links, crashes, pauses, drift, the leaders of each
 * term, client operations, and the checker's verdict — with play, pause, step and scrub.
 * Membership runs (gossip, heartbeat) show each member's standing and the emergent leader; a
 * large membership is drawn as a grid, with at most IN_FLIGHT_MAX messages in flight.
 * "What if": untick a fault and rerun; the seed's other draws stay the same.
 */
import type { SimRecording } from '../../sim/sim-recorder.js';
import { fill, h } from './dom.js';
import { nodeStateAt, ReplayModel, type NodeAt, type ReplayAt } from './replay-model.js';
import type { SimRunRequest } from './sim-worker.js';

const SVG = 'http://www.w3.org/2000/svg';
const SPEEDS_MS_PER_S = [20, 100, 500, 2000, 10_000];

export class ReplayTab {
  private model: ReplayModel | undefined;
  private t = 0;
  private playing = false;
  private speedMsPerS = 500;
  private lastFrameMs = 0;
  private readonly stage = document.createElementNS(SVG, 'svg');
  private readonly side = h('div.replay-side');
  private readonly slider = h('input', { type: 'range', min: 0, max: 1000, value: 0,
    'data-testid': 'scrub' });
  private readonly clock = h('span.clock', { 'data-testid': 'replay-time' }, '–');
  private readonly faults = h('div.faults');
  private readonly note = h('p.muted', { 'data-testid': 'replay-note' },
    'No run loaded: open a recording, or run a seed.');
  private readonly form = runForm((request) => this.run(request));

  constructor(private readonly panel: HTMLElement) {
    this.stage.setAttribute('viewBox', '-260 -230 520 460');
    this.stage.classList.add('stage');
    const file = h('input', { type: 'file', accept: '.json', onchange: (e: Event) => {
      const input = e.target as HTMLInputElement;
      void input.files?.[0]?.text().then((text) => this.load(JSON.parse(text) as SimRecording));
    } });
    fill(panel, h('div.row', {}, h('label', {}, 'Open a recording ', file)), this.form.element,
      this.note, h('div.row.controls', {},
        button('◀ back', 'back', () => this.seek(this.model?.previousStep(this.t) ?? 0)),
        button('▶', 'play', () => this.togglePlay()),
        button('step ▶', 'step', () => this.seek(this.model?.nextStep(this.t) ?? 0)),
        button('to the verdict', 'to-verdict', () => this.seek(this.model?.verdictMs ?? this.t)),
        speedSelect((v) => (this.speedMsPerS = v)), this.clock),
      this.slider, h('div.replay', {}, this.stage, this.side), h('h3', {}, 'Faults'),
      this.faults);
    this.slider.addEventListener('input', () => {
      this.seek(Number(this.slider.value) / 1000 * (this.model?.endMs ?? 0));
    });
    requestAnimationFrame((now) => this.frame(now));
  }

  load(recording: SimRecording): void {
    this.model = new ReplayModel(recording);
    this.form.show(recording);
    const verdict = this.model.verdictMs;
    fill(this.note,
      `${recording.scenario} seed ${recording.seed}, ${recording.nodes.length} nodes, ` +
      `${(recording.simulatedMs / 1000).toFixed(1)} s simulated, ${recording.messages.length} ` +
      `messages, trace ${recording.traceHash}. ` + (verdict === undefined ? 'Every checker held.'
      : `A checker fired at ${verdict.toFixed(3)} ms.`));
    this.renderFaults(recording);
    this.seek(0);
  }

  private run(request: SimRunRequest): void {
    fill(this.note, `running ${request.scenario} seed ${request.seed} in the browser…`);
    const worker = new Worker(new URL('./sim-worker.js', import.meta.url), { type: 'module' });
    worker.onmessage = (message: MessageEvent<{ recording?: SimRecording; error?: string }>) => {
      worker.terminate();
      if (message.data.recording !== undefined) this.load(message.data.recording);
      else fill(this.note, message.data.error ?? 'the run failed');
    };
    worker.onerror = (e) => fill(this.note, `the run failed: ${e.message}`);
    worker.postMessage(request);
  }

  private renderFaults(recording: SimRecording): void {
    const faults = recording.events.filter((e) => e.kind === 'fault');
    fill(this.faults, faults.length === 0 ? h('p.muted', {}, 'this run drew no faults') : null,
      ...faults.map((f) => h('label.fault', {}, h('input', { type: 'checkbox', checked: !f.skipped,
        'data-ordinal': f.ordinal }), ` ${f.atMs.toFixed(1)} ms: ${f.label}`)),
      faults.length === 0 ? null : button('rerun with only the ticked faults', 'rerun', () => {
        const skip = [...this.faults.querySelectorAll<HTMLInputElement>('input[data-ordinal]')]
          .filter((box) => !box.checked).map((box) => Number(box.dataset['ordinal']));
        this.run({ scenario: recording.scenario, seed: recording.seed,
          options: recording.options, skipFaults: skip });
      }));
  }

  private togglePlay(): void {
    this.playing = !this.playing;
    const play = this.panel.querySelector('[data-testid="play"]');
    if (play) play.textContent = this.playing ? '⏸' : '▶';
  }

  private frame(now: number): void {
    const elapsedS = Math.min(0.1, (now - this.lastFrameMs) / 1000);
    this.lastFrameMs = now;
    if (this.playing && this.model !== undefined) {
      this.seek(Math.min(this.model.endMs, this.t + elapsedS * this.speedMsPerS));
      if (this.t >= this.model.endMs) this.togglePlay();
    }
    requestAnimationFrame((next) => this.frame(next));
  }

  private seek(t: number): void {
    if (this.model === undefined) return;
    this.t = Math.max(0, Math.min(this.model.endMs, t));
    this.slider.value = String(Math.round(1000 * this.t / Math.max(1, this.model.endMs)));
    this.clock.textContent = `t = ${this.t.toFixed(3)} ms`;
    const at = this.model.at(this.t);
    drawStage(this.stage, this.model.recording, at, this.t);
    drawSide(this.side, at, this.t);
  }
}

function button(text: string, testId: string, onclick: () => void): HTMLButtonElement {
  return h('button', { 'data-testid': testId, onclick }, text);
}

function speedSelect(onChange: (msPerS: number) => void): HTMLSelectElement {
  const select = h('select', { title: 'virtual ms per second' },
    ...SPEEDS_MS_PER_S.map((v) => h('option', { value: v, selected: v === 500 },
      `${v} ms/s`)));
  select.addEventListener('change', () => onChange(Number(select.value)));
  return select;
}

function runForm(run: (request: SimRunRequest) => void): {
  element: HTMLElement; show(recording: SimRecording): void;
} {
  const scenario = h('select', {}, ...['raft', 'raft-vote-restart', 'raft-figure8',
    'raft-ack-crash', 'raft-partial-partition', 'lease', 'core', 'gossip', 'heartbeat']
    .map((s) => h('option', { value: s }, s)));
  const seed = h('input', { type: 'number', value: 7, min: 0, style: 'width:8em' });
  const mutant = h('input',
    { type: 'text', placeholder: 'mutant (optional)', style: 'width:12em' });
  const element = h('div.row', {}, 'Run a seed here: ', scenario, seed, mutant,
    button('run', 'run', () => run({ scenario: scenario.value, seed: Number(seed.value),
      options: mutant.value === '' ? {} : { mutant: mutant.value }, skipFaults: [] })));
  return { element, show: (recording) => {
    scenario.value = recording.scenario;
    seed.value = String(recording.seed);
    const planted = recording.options['mutant'];
    mutant.value = typeof planted === 'string' ? planted : '';
  } };
}

/** Where each node is drawn, and how large. */
interface Layout {
  readonly where: Map<string, [number, number]>;
  /** Radius of a member's circle, and of a client's. Unit: SVG units. */
  readonly memberR: number;
  readonly clientR: number;
}

/** Members drawn beyond this many go on a grid instead of a ring. */
const RING_MAX = 24;

/**
 * Members on a ring (a grid past RING_MAX: a 1,000-member gossip stays readable), clients
 * (lease, core) in a row below them.
 */
function layout(nodes: readonly string[], members: readonly string[] | undefined): Layout {
  const memberSet = new Set(members ?? nodes);
  const ring = nodes.filter((id) => memberSet.has(id));
  const clients = nodes.filter((id) => !memberSet.has(id));
  const bottom = clients.length > 0 ? 180 : 220;
  const where = new Map<string, [number, number]>();
  let memberR: number;
  if (ring.length <= RING_MAX) {
    const radius = clients.length > 0 ? 150 : 180;
    ring.forEach((id, i) => {
      const angle = -Math.PI / 2 + (2 * Math.PI * i) / ring.length;
      where.set(id, [radius * Math.cos(angle), radius * Math.sin(angle) - (bottom < 220 ? 20 : 0)]);
    });
    memberR = Math.min(30, (Math.PI * radius) / Math.max(1, ring.length) * 0.8);
  } else {
    const columns = Math.ceil(Math.sqrt(ring.length));
    const rows = Math.ceil(ring.length / columns);
    const cell = Math.min(480 / columns, (bottom + 220) / rows);
    ring.forEach((id, i) => {
      where.set(id,
        [-240 + cell * (i % columns + 0.5), -220 + cell * (Math.floor(i / columns) + 0.5)]);
    });
    memberR = cell * 0.42;
  }
  const step = 500 / Math.max(1, clients.length);
  clients.forEach((id, i) => where.set(id, [-250 + step * (i + 0.5), 205]));
  return { where, memberR, clientR: Math.min(12, step * 0.4) };
}

/** The line under a node's name: Raft role and term, gossip standing, heartbeat suspicions. */
function subLabel(n: NodeAt, state: string): string {
  if (n.state !== undefined) return `${state} i${n.incarnation ?? 0}`;
  if (n.suspectedBy.size > 0) {
    const counts = [...n.suspectedBy].filter(([, by]) => by.size > 0)
      .map(([detector, by]) => `${detector === 'phi-accrual' ? 'φ' : detector} ${by.size}`);
    return counts.length === 0 ? state : `suspect: ${counts.join(', ')}`;
  }
  return n.member ? `${state} t${n.term}` : state;
}

function svg(tag: string, attrs: Record<string, string | number>, text?: string): SVGElement {
  const element = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) element.setAttribute(k, String(v));
  if (text !== undefined) element.textContent = text;
  return element;
}

function drawStage(stage: SVGSVGElement, recording: SimRecording, at: ReplayAt, t: number):
  void {
  const { where, memberR, clientR } = layout(recording.nodes, recording.members);
  const parts: SVGElement[] = [];
  for (const [from, to] of at.cutLinks) {
    const a = where.get(from!);
    const b = where.get(to!);
    if (a && b) parts.push(svg('line', { x1: a[0], y1: a[1], x2: b[0], y2: b[1], class: 'cut' }));
  }
  const msgR = Math.max(1.5, Math.min(4, memberR / 6));
  const emergent = at.emergentLeaders[0]?.leader;
  for (const m of at.inFlight) {
    const a = where.get(m[1]);
    const b = where.get(m[2]);
    if (!a || !b) continue;
    const f = m[4] < 0 ? 0.5 : Math.min(1, (t - m[0]) / Math.max(0.001, m[4] - m[0]));
    parts.push(svg('circle', { cx: a[0] + (b[0] - a[0]) * f, cy: a[1] + (b[1] - a[1]) * f,
      r: msgR, class: `msg ${m[4] < 0 ? 'lost' : m[3].split(' ')[0]}` }, undefined));
  }
  for (const id of recording.nodes) {
    const n = at.nodes.get(id)!;
    const [x, y] = where.get(id)!;
    const r = n.member ? memberR : clientR;
    const state = nodeStateAt(n, t);
    const sub = subLabel(n, state);
    // Gossip: the leader every member names is drawn as a Raft leader is.
    const shown = state === 'alive' && id === emergent ? 'alive leader' : state;
    const circle = svg('circle', { cx: x, cy: y, r, class: `node ${shown}`, 'data-node': id });
    circle.append(svg('title', {}, `${id}: ${sub}` +
      (n.driftRate === 0 ? '' : `, clock drift ${(n.driftRate * 100).toFixed(2)}%`)));
    parts.push(circle);
    if (r >= 9) {
      parts.push(svg('text', { x, y: r >= 20 ? y - 4 : y + 4,
        class: r >= 20 ? 'label' : 'label small' }, id));
    }
    if (r >= 20) parts.push(svg('text', { x, y: y + 12, class: 'sub' }, sub));
    // On a grid the line would run into the next row: the tooltip says it there.
    if (n.driftRate !== 0 && r >= 20 && recording.nodes.length <= RING_MAX) {
      parts.push(svg('text', { x, y: y + r + 16, class: 'sub' },
        `drift ${(n.driftRate * 100).toFixed(2)}%`));
    }
  }
  stage.replaceChildren(...parts);
}

function drawSide(side: HTMLElement, at: ReplayAt, t: number): void {
  // The latest 12 terms, and always every term with two leaders (the one a checker fired on
  // may be older than the latest 12 when the run went on electing).
  const sorted = [...at.leadersByTerm].sort((a, b) => b[0] - a[0]);
  const terms = sorted.filter(([, leaders], i) => i < 12 || leaders.length > 1);
  fill(side,
    at.violations.length === 0 ? null : h('div.verdict', { 'data-testid': 'verdict' },
      ...at.violations.map((v) => h('p', {}, h('b', {}, v.checker), ` at ${v.atMs.toFixed(3)} ms: `,
        v.message))),
    standing(at, t),
    at.emergentLeaders.length === 0 ? null : h('h4', {}, 'Emergent leader'),
    at.emergentLeaders.length === 0 ? null : h('ul.terms', { 'data-testid': 'replay-leader' },
      ...at.emergentLeaders.map((e, i) => h(i === 0 ? 'li.current' : 'li', {},
        `${e.atMs.toFixed(1)} ms: ${e.leader === undefined ? `members differ (${e.answers})`
          : `${e.leader}, generation ${e.generation}, named by every member`}`))),
    terms.length === 0 && at.emergentLeaders.length > 0 ? null : h('h4', {}, 'Leaders by term'),
    terms.length === 0 && at.emergentLeaders.length > 0 ? null
      : h('ul.terms', { 'data-testid': 'replay-terms' }, ...terms.map(([term, leaders]) =>
        h(`li${leaders.length > 1 ? '.two-leaders' : ''}`, { 'data-term': term },
          `term ${term}: ${leaders.join(' and ')}${leaders.length > 1 ? ' — TWO LEADERS' : ''}`))),
    at.clientOps.length === 0 ? null : h('h4', {}, 'Client operations'),
    at.clientOps.length === 0 ? null : h('ul.ops', {}, ...at.clientOps.map((op) =>
      h('li', {}, `${op.client} ${op.op} → ${op.outcome}`))),
    h('h4', {}, 'Events'),
    h('ul.events', {}, ...[...at.recent].reverse().slice(0, 16).map((e) =>
      h('li', {}, `${e.atMs.toFixed(1)} ms ${describe(e)}`))));
}

/** How many members stand where (alive, suspect, dead, down, ...), for membership runs. */
function standing(at: ReplayAt, t: number): HTMLElement | null {
  const counts = new Map<string, number>();
  let membership = false;
  for (const n of at.nodes.values()) {
    if (!n.member) continue;
    if (n.state !== undefined || n.suspectedBy.size > 0) membership = true;
    const state = nodeStateAt(n, t);
    counts.set(state, (counts.get(state) ?? 0) + 1);
  }
  if (!membership) return null;
  return h('p', { 'data-testid': 'replay-standing' }, h('b', {}, 'Members: '),
    [...counts].sort((a, b) => b[1] - a[1]).map(([state, n]) => `${n} ${state}`).join(', '));
}

function describe(e: ReplayAt['recent'][number]): string {
  switch (e.kind) {
    case 'member': return e.detector === undefined
      ? `${e.by} sees ${e.node} ${e.state} (incarnation ${e.incarnation ?? 0})`
      : `${e.by}'s ${e.detector} ${e.state === 'suspect' ? 'suspects' : 'trusts'} ${e.node}`;
    case 'leader': return e.leader === undefined ? `members name different leaders: ${e.answers}`
      : `every member names ${e.leader} (generation ${e.generation})`;
    case 'note': return e.text;
    case 'role': return `${e.node} ${e.from} → ${e.to} (term ${e.term}, ${e.reason})`;
    case 'crash': case 'restart': case 'resume': return `${e.kind} ${e.node}`;
    case 'pause': return `pause ${e.node} for ${e.durationMs.toFixed(0)} ms`;
    case 'drift': return `${e.node} clock drift ${(e.driftRate * 100).toFixed(3)}%`;
    case 'partition': return `partition: ${e.links.length} links cut`;
    case 'heal': return 'network healed';
    case 'network': return e.label;
    case 'violation': return `VIOLATION ${e.checker}`;
    case 'fault': return `${e.skipped ? 'skipped: ' : ''}${e.label}`;
    default: return e.kind;
  }
}
