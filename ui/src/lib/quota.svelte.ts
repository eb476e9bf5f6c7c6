// The quota readings of one connection (`quota`), polled once a second while the Profiles
// screen is shown and the window visible, like the Activity screen's ledger.
import { commands } from '../bindings';
import { attempt, unwrap, type Failure } from './errors';
import type { ProfileQuota, QuotaView } from './types';

type QuotaCall = (typeof commands)['quota'];

export class QuotaStore {
  view = $state<QuotaView | null>(null);
  error = $state<Failure | null>(null);
  private timer: ReturnType<typeof setTimeout> | null = null;
  private running = false;

  constructor(
    readonly slug: string,
    private readonly call: QuotaCall = (...a) => commands.quota(...a),
    private readonly periodMs = 1000,
  ) {}

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
    if (this.running) return () => this.stop();
    this.running = true;
    const tick = async () => {
      if (!this.running) return;
      if (typeof document === 'undefined' || document.visibilityState !== 'hidden') await this.poll();
      if (this.running) this.timer = setTimeout(tick, this.periodMs);
    };
    void tick();
    return () => this.stop();
  }

  stop(): void {
    this.running = false;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }
}
