/**
 * A FIFO of encoded frames with its byte total: the bounded per-peer outbound queue. Shifting
 * is O(1) (a head index, compacted now and then), since a busy link drains thousands per second.
 */
export class FrameQueue {
  private items: (Buffer | undefined)[] = [];
  private head = 0;
  private bytesValue = 0;

  get size(): number {
    return this.items.length - this.head;
  }

  /** Sum of the queued frames' lengths. Unit: bytes. */
  get bytes(): number {
    return this.bytesValue;
  }

  push(frame: Buffer): void {
    this.items.push(frame);
    this.bytesValue += frame.length;
  }

  shift(): Buffer | undefined {
    if (this.head >= this.items.length) return undefined;
    const frame = this.items[this.head];
    this.items[this.head] = undefined;
    this.head++;
    if (this.head === this.items.length) {
      this.items = [];
      this.head = 0;
    } else if (this.head >= 1024 && this.head * 2 >= this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    if (frame !== undefined) this.bytesValue -= frame.length;
    return frame;
  }

  /** Empties the queue; returns how many frames were dropped. */
  clear(): number {
    const dropped = this.size;
    this.items = [];
    this.head = 0;
    this.bytesValue = 0;
    return dropped;
  }
}
