// One timer for every deadline of the process. Calls set deadlines of a few fixed lengths (an action's timeout, a
// fetch's), so each length keeps its deadlines in a list that is sorted by construction (a later call's deadline
// of the same length is later): adding is an append, cancelling an unlink, both O(1), and one timer armed at the
// earliest head serves them all. Node's own timers keep such lists too, but a Timeout per call costs an object,
// a handle and a clearTimeout; this costs one small node. A deadline never keeps the process alive.

export interface Deadline {
  /** Cancels it (the work finished first). Safe to call twice. */
  cancel(): void;
}

class Entry implements Deadline {
  prev: Entry | undefined;
  next: Entry | undefined;
  list: List | undefined;

  constructor(
    readonly at: number,
    readonly fire: () => void,
  ) {}

  cancel(): void {
    this.list?.unlink(this);
  }
}

class List {
  head: Entry | undefined;
  tail: Entry | undefined;

  append(e: Entry): void {
    e.list = this;
    e.prev = this.tail;
    if (this.tail) this.tail.next = e;
    else this.head = e;
    this.tail = e;
  }

  unlink(e: Entry): void {
    if (e.prev) e.prev.next = e.next;
    else this.head = e.next;
    if (e.next) e.next.prev = e.prev;
    else this.tail = e.prev;
    e.prev = e.next = e.list = undefined;
  }
}

const lists = new Map<number, List>();
let timer: NodeJS.Timeout | undefined;
let armedAt = Number.POSITIVE_INFINITY;

/** Calls `fire` once `ms` have passed, unless cancelled first. */
export function deadline(ms: number, fire: () => void): Deadline {
  const length = Math.max(0, Math.ceil(ms));
  const e = new Entry(performance.now() + length, fire);
  let list = lists.get(length);
  if (!list) {
    list = new List();
    lists.set(length, list);
  }
  list.append(e);
  if (e.at < armedAt) arm(e.at);
  return e;
}

function arm(at: number): void {
  if (timer) clearTimeout(timer);
  armedAt = at;
  timer = setTimeout(expire, Math.max(0, at - performance.now()));
  timer.unref();
}

function expire(): void {
  timer = undefined;
  armedAt = Number.POSITIVE_INFINITY;
  const now = performance.now();
  const due: Entry[] = [];
  let next = Number.POSITIVE_INFINITY;
  for (const [length, list] of lists) {
    let e = list.head;
    while (e && e.at <= now) {
      const after = e.next;
      list.unlink(e);
      due.push(e);
      e = after;
    }
    if (e) next = Math.min(next, e.at);
    else lists.delete(length);
  }
  if (next !== Number.POSITIVE_INFINITY) arm(next);
  for (const e of due) e.fire();
}
