/**
 * The page's one DOM helper: `h('div.cls', { title: 'x' }, child, ...)`. Text goes in as
 * text nodes (never as HTML), so nothing a member or a key holds can inject markup.
 */
export type Child = Node | string | number | null | undefined | false | readonly Child[];

export function h<K extends keyof HTMLElementTagNameMap>(tagAndClasses: K | `${K}.${string}`,
  attrs: Readonly<Record<string, string | number | boolean | EventListener | undefined>> = {},
  ...children: Child[]): HTMLElementTagNameMap[K] {
  const [tag, ...classes] = tagAndClasses.split('.') as [K, ...string[]];
  const element = document.createElement(tag);
  if (classes.length > 0) element.className = classes.join(' ');
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    if (typeof value === 'function') element.addEventListener(name.replace(/^on/, ''), value);
    else if (name === 'style') element.setAttribute('style', String(value));
    else element.setAttribute(name, value === true ? '' : String(value));
  }
  append(element, children);
  return element;
}

function append(parent: Node, children: readonly Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(parent, child as readonly Child[]);
    else parent.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replaces everything inside `parent`. */
export function fill(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, children);
}

export function clockTime(atMs: number): string {
  const d = new Date(atMs);
  const pad = (n: number, w = 2): string => String(n).padStart(w, '0');
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.` +
    pad(d.getMilliseconds(), 3);
}

export function ms(value: number | null | undefined, digits = 1): string {
  if (value === null || value === undefined) return '–';
  return value >= 10_000 ? `${(value / 1000).toFixed(0)} s` : `${value.toFixed(digits)} ms`;
}
