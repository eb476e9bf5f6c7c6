// Starting with the system (issue 17): off by default; the engine keeps the wish and the app
// writes or removes the OS's autostart entry to match.
import { commands, type AutostartView } from '../bindings';
import { attempt, unwrap, type Failure } from './errors';

export type AutostartBackend = Pick<typeof commands, 'autostartStatus' | 'autostartSet'>;

export class AutostartStore {
  view = $state<AutostartView | null>(null);
  error = $state<Failure | null>(null);
  busy = $state(false);

  constructor(private readonly backend: AutostartBackend = commands) {}

  async refresh(): Promise<void> {
    const out = await attempt(() => unwrap(this.backend.autostartStatus()));
    if (out.ok) this.view = out.data;
    this.error = out.ok ? null : out.failure;
  }

  async set(enabled: boolean): Promise<void> {
    this.busy = true;
    const out = await attempt(() => unwrap(this.backend.autostartSet(enabled)));
    if (out.ok) this.view = out.data;
    this.error = out.ok ? null : out.failure;
    this.busy = false;
  }
}
