// The usage chart of one connection (`usage_chart`), refreshed every 5 s while the Activity
// screen is shown and the window visible; the range (days) is the user's pick.
import { commands } from '../bindings';
import { attempt, unwrap, type Failure } from './errors';
import { VisiblePoller } from './poller';
import type { UsageChart } from './types';

type UsageCall = (typeof commands)['usageChart'];

export const USAGE_DAYS = [7, 14, 30, 90];

export class UsageStore {
  chart = $state<UsageChart | null>(null);
  error = $state<Failure | null>(null);
  days = $state(14);
  private readonly poller: VisiblePoller;

  constructor(
    readonly slug: string,
    private readonly call: UsageCall = (...a) => commands.usageChart(...a),
    periodMs = 5000,
  ) {
    this.poller = new VisiblePoller(() => this.poll(), periodMs);
  }

  async poll(): Promise<void> {
    const out = await attempt(() => unwrap(this.call(this.slug, this.days)));
    if (out.ok) {
      this.chart = out.data;
      this.error = null;
    } else {
      this.error = out.failure;
    }
  }

  setDays(days: number): void {
    this.days = days;
    void this.poll();
  }

  start(): () => void {
    return this.poller.start();
  }

  stop(): void {
    this.poller.stop();
  }
}
