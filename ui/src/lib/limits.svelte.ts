// One connection's caps (issue 41, one person's spend cap): each limit on `connection:SLUG` with
// its current window (`connection_limits`), polled every two seconds while the Limits tab is
// shown; setting a daily or monthly USD cap or requests per minute (`connection_cap_set`: the same
// kind set again changes its amount and keeps what was spent) and removing one (`limit_remove`).
import { commands } from '../bindings';
import { attempt, unwrap, type Failure } from './errors';
import { VisiblePoller } from './poller';
import type { CapKind, LimitStatusView } from './types';

export type LimitsBackend = Pick<typeof commands, 'connectionLimits' | 'connectionCapSet' | 'limitRemove'>;

export class LimitsStore {
  rows = $state<LimitStatusView[] | null>(null);
  error = $state<Failure | null>(null);
  busy = $state(false);
  private readonly poller: VisiblePoller;

  constructor(
    readonly slug: string,
    private readonly backend: LimitsBackend = commands,
    periodMs = 2000,
  ) {
    this.poller = new VisiblePoller(() => this.poll(), periodMs);
  }

  async poll(): Promise<void> {
    const out = await attempt(() => unwrap(this.backend.connectionLimits(this.slug)));
    if (out.ok) {
      this.rows = out.data;
      this.error = null;
    } else {
      this.error = out.failure;
    }
  }

  /** Sets a cap; `null` when it was set, else why not. */
  async setCap(kind: CapKind, amount: number): Promise<Failure | null> {
    this.busy = true;
    try {
      const out = await attempt(() => unwrap(this.backend.connectionCapSet(this.slug, kind, amount)));
      if (!out.ok) return out.failure;
      await this.poll();
      return null;
    } finally {
      this.busy = false;
    }
  }

  async remove(id: string): Promise<Failure | null> {
    const out = await attempt(() => unwrap(this.backend.limitRemove(id)));
    if (!out.ok) return out.failure;
    await this.poll();
    return null;
  }

  start(): () => void {
    return this.poller.start();
  }
}

// Amounts cross IPC as `number | null` (a JSON float may be null); a missing one reads as 0.
const n = (v: number | null): number => v ?? 0;

/** How a cap reads: `$5.00 a day`, `60 requests a minute`, `2 in flight`. */
export function capText(r: LimitStatusView): string {
  const per = r.period ? ` a ${r.period}` : ' in flight';
  return r.measure === 'usd' ? `${usd(n(r.capacity))}${per}` : `${n(r.capacity).toLocaleString('en-US')} ${r.measure}${per}`;
}

/** Used (and reserved by running requests) of the capacity, as words. */
export function usedText(r: LimitStatusView): string {
  const f = (v: number | null) => (r.measure === 'usd' ? usd(n(v)) : n(v).toLocaleString('en-US'));
  const reserved = n(r.reserved) > 0 ? ` (+${f(r.reserved)} running)` : '';
  return `${f(r.used)} used${reserved}, ${f(r.remaining)} left`;
}

/** The share of the cap that is used or reserved, 0–1 (a zero cap is full). */
export function usedShare(r: LimitStatusView): number {
  if (n(r.capacity) <= 0) return 1;
  return Math.min(1, (n(r.used) + n(r.reserved)) / n(r.capacity));
}

/** Whether the cap has nothing left: the relay refuses its requests. */
export function isFull(r: LimitStatusView): boolean {
  return n(r.remaining) <= 0;
}

function usd(v: number): string {
  return `$${v.toFixed(v !== 0 && Math.abs(v) < 0.01 ? 4 : 2)}`;
}
