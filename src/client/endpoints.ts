/**
 * Endpoint text as users write it (`127.0.0.1:2379`, `http://db1:2379`, `https://db1:2379`,
 * `[::1]:2379`, a comma-separated list) turned into base URLs (`http://127.0.0.1:2379`) the
 * client calls. With TLS on (`{ tls: true }`) a bare host:port means `https://`, and an
 * `http://` URL is refused: it would send in the clear what the user meant to protect.
 */

export interface EndpointParseOptions {
  /** TLS is configured: bare endpoints are https://, http:// ones are refused. */
  readonly tls?: boolean;
}

/** The base URL of `text`, or the rule it breaks. */
export function parseEndpoint(text: string, options: EndpointParseOptions = {}):
  { url: string } | { problem: string } {
  if (typeof text !== 'string' || text.trim() === '') {
    return { problem: 'must be host:port or http://host:port' };
  }
  const trimmed = text.trim();
  const scheme = options.tls === true ? 'https' : 'http';
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed) ? trimmed : `${scheme}://${trimmed}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    return { problem: 'must be host:port or http://host:port' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return { problem: `scheme ${url.protocol} is not supported (use http:// or https://)` };
  }
  if (url.hostname === '') return { problem: 'names no host' };
  if (options.tls === true && url.protocol === 'http:') {
    return { problem: 'is http:// but TLS is configured (use https:// or host:port)' };
  }
  if (url.port === '' && !/^https?:\/\//i.test(trimmed)) {
    return { problem: 'names no port (host:port)' };
  }
  if ((url.pathname !== '/' && url.pathname !== '') || url.search !== '' || url.hash !== '') {
    return { problem: 'must not carry a path, query or fragment' };
  }
  return { url: url.origin };
}

/**
 * Parses `a:1,b:2` into base URLs; throws nothing, returns every problem instead, one string
 * per bad item, naming it.
 */
export function parseEndpointList(text: string, options: EndpointParseOptions = {}):
  { urls: string[] } | { problems: string[] } {
  const items = text.split(',').map((s) => s.trim()).filter((s) => s !== '');
  if (items.length === 0) return { problems: ['no endpoint given (host:port,...)'] };
  const urls: string[] = [];
  const problems: string[] = [];
  for (const item of items) {
    const parsed = parseEndpoint(item, options);
    if ('problem' in parsed) problems.push(`'${item}' ${parsed.problem}`);
    else if (!urls.includes(parsed.url)) urls.push(parsed.url);
  }
  return problems.length > 0 ? { problems } : { urls };
}

/** The origin (scheme, host, port) of an absolute URL, or undefined if it is not one. */
export function originOf(text: string): string | undefined {
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : undefined;
  } catch {
    return undefined;
  }
}
