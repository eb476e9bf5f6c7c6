// The quota readings of one connection (`quota`), polled once a second while the Profiles
// screen is shown and the window visible, like the Activity screen's ledger.
import { commands } from '../bindings';
import { attempt, unwrap, type Failure } from './errors';
import type { ProfileQuota, QuotaView } from './types';
import { VisiblePoller } from './poller';

type QuotaCall = (typeof commands)['quota'];

export class QuotaStore {
  view = $state<QuotaView | null>(null);
  error = $state<Failure | null>(null);
  private readonly poller: VisiblePoller;

  constructor(
    readonly slug: string,
    private readonly call: QuotaCall = (...a) => commands.quota(...a),
    private readonly periodMs = 1000,
  ) {
    this.poller = new VisiblePoller(() => this.poll(), this.periodMs);
  }

  /** The readings of one profile (`undefined` until loaded or when not listed). */
  of(profileId: string): ProfileQuota | undefined {
    return this.view?.profiles.find((p) => p.id === profileId);
  }

  async poll(): Promise<void> {
    const out = await attempt(() => unwrap(this.call(this.slug)));
    if (out.ok) {
      this.view = out.data;
      this.error = null;
    } else {
      this.error = out.failure;
    }
  }

  /** Starts polling while the window is visible; returns the stop function. */
  start(): () => void {
    return this.poller.start();
  }

  stop(): void {
    this.poller.stop();
  }
}
