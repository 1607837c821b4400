/**
 * Which endpoint the next attempt goes to. Requests that must reach the leader go to the last
 * endpoint known to lead (it served such a request, a redirect pointed to it, or an error body
 * named it); otherwise, and after the leader fails, the client walks the endpoints round-robin
 * so one dead member costs one failed attempt, not a stuck client.
 */

export class EndpointRouter {
  private readonly urls: string[];
  private leader: string | undefined = undefined;
  private cursor = 0;

  constructor(endpoints: readonly string[]) {
    this.urls = [...endpoints];
  }

  /** The endpoint believed to lead, if any. */
  get leaderUrl(): string | undefined {
    return this.leader;
  }

  /** Every endpoint known: the configured ones and leaders learned from redirects. */
  get endpoints(): readonly string[] {
    return this.urls;
  }

  /** Where the next attempt goes: the leader when known and wanted, else the next in turn. */
  next(preferLeader: boolean): string {
    if (preferLeader && this.leader !== undefined) return this.leader;
    const url = this.urls[this.cursor % this.urls.length] as string;
    this.cursor = (this.cursor + 1) % this.urls.length;
    return url;
  }

  /** `url` answered a leader-only request, or was named as the leader. */
  noteLeader(url: string): void {
    this.leader = url;
    if (!this.urls.includes(url)) this.urls.push(url);
  }

  /** `url` failed: stop preferring it. */
  noteFailure(url: string): void {
    if (this.leader === url) this.leader = undefined;
  }
}
