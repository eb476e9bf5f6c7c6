/**
 * Runs `poll` every `periodMs` while the window is visible (a hidden window skips the call
 * but keeps the schedule), one call at a time: the next waits until the previous finished.
 * The live stores (Activity, quota gauges) poll through it.
 */
export class VisiblePoller {
  private timer: ReturnType<typeof setTimeout> | null = null;
  private running = false;

  constructor(
    private readonly poll: () => Promise<void>,
    private readonly periodMs: number,
  ) {}

  /** Starts polling (once, however often called); returns the stop function. */
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
