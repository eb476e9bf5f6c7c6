// Verification progress of one connection: listens to the typed `verify-progress` event while
// a `verify` command runs and keeps, per profile, whether it waits, runs or is done (with
// its result). The report the command returns fills in anything an event missed.
import { events, commands } from '../bindings';
import { attempt, unwrap, type Outcome } from './errors';
import type { VerifyProgress, VerifyReport, VerifyResult } from './types';

export type ProfileProgress = { state: 'queued' | 'running' | 'done'; result: VerifyResult | null };
export type Listen = (cb: (event: { payload: VerifyProgress }) => void) => Promise<() => void>;
type VerifyCall = (typeof commands)['verify'];

export class VerifyTracker {
  running = $state(false);
  done = $state(0);
  total = $state(0);
  progress = $state<Record<string, ProfileProgress>>({});
  private targets: string[] = [];

  constructor(
    private readonly slug: string,
    private readonly call: VerifyCall = commands.verify,
    private readonly listen: Listen = (cb) => events.verifyProgress.listen(cb),
  ) {}

  /** Verifies `targets` (profile ids; `profile` null means all of the connection). */
  async run(targets: string[], profile: string | null, deep: boolean): Promise<Outcome<VerifyReport>> {
    this.running = true;
    this.targets = [...targets];
    this.done = 0;
    this.total = targets.length;
    const next = { ...this.progress };
    for (const id of targets) next[id] = { state: 'queued', result: null };
    this.progress = next;
    // Without live events (listener refused) the report still fills in every result.
    const stop = await this.listen((e) => this.handle(e.payload)).catch(() => () => {});
    try {
      const report = await attempt(() => unwrap(this.call(this.slug, profile, deep)));
      if (report.ok) {
        for (const r of report.data.results) this.finish(r);
      } else {
        for (const id of targets) {
          if (this.progress[id]?.state !== 'done') this.progress[id] = { state: 'done', result: null };
        }
        this.count();
      }
      return report;
    } finally {
      stop();
      this.running = false;
    }
  }

  /** One progress event (events of other connections are ignored). */
  handle(e: VerifyProgress): void {
    if (e.slug !== this.slug) return;
    const p = e.progress;
    if (p.event === 'started') {
      this.total = Math.max(this.total, p.total);
      if (this.progress[p.profile_id]?.state !== 'done') {
        this.progress[p.profile_id] = { state: 'running', result: null };
      }
    } else {
      this.total = Math.max(this.total, p.total);
      this.finish(p.result);
    }
  }

  private finish(r: VerifyResult): void {
    this.progress[r.profile_id] = { state: 'done', result: r };
    if (!this.targets.includes(r.profile_id)) this.targets.push(r.profile_id);
    this.count();
  }

  private count(): void {
    this.done = this.targets.filter((id) => this.progress[id]?.state === 'done').length;
  }

  /** Forgets a profile's last result (after its credential was replaced). */
  forget(id: string): void {
    const next = { ...this.progress };
    delete next[id];
    this.progress = next;
  }
}
