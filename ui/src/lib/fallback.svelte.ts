// The fallback chain of one connection, over the desktop commands `fallback_status`,
// `fallback_set` (an empty list clears), `fallback_activate` and `fallback_deactivate`, with
// the other connections of the same protocol as candidates, and each key's background
// re-verification times (`key_checks`). The engine decides and refuses; this only relays.
import { commands } from '../bindings';
import { attempt, unwrap, type Failure, type Outcome } from './errors';
import type { FallbackStatus } from './fallback';
import type { KeyCheck_Serialize as KeyCheck } from '../bindings';

export class FallbackStore {
  status = $state<FallbackStatus | null>(null);
  candidates = $state<string[]>([]);
  checks = $state<KeyCheck[]>([]);
  error = $state<Failure | null>(null);

  constructor(
    readonly slug: string,
    private readonly backend = commands,
  ) {}

  async refresh(): Promise<void> {
    const [status, list, checks] = await Promise.all([
      attempt(() => unwrap(this.backend.fallbackStatus(this.slug))),
      attempt(() => unwrap(this.backend.listConnections())),
      attempt(() => unwrap(this.backend.keyChecks(this.slug))),
    ]);
    if (status.ok) this.status = status.data;
    if (checks.ok) this.checks = checks.data;
    if (list.ok) {
      const conns = list.data.map((d) => d.connection);
      const own = conns.find((c) => c.slug === this.slug);
      this.candidates = conns.filter((c) => c.slug !== this.slug && c.protocol === own?.protocol).map((c) => c.slug);
    }
    this.error = !status.ok ? status.failure : null;
  }

  private async run(action: () => Promise<FallbackStatus>): Promise<Outcome<FallbackStatus>> {
    const out = await attempt(action);
    if (out.ok) this.status = out.data;
    return out;
  }

  save(hops: string[]) {
    return this.run(() => unwrap(this.backend.fallbackSet(this.slug, hops)));
  }

  activate() {
    return this.run(() => unwrap(this.backend.fallbackActivate(this.slug)));
  }

  deactivate() {
    return this.run(() => unwrap(this.backend.fallbackDeactivate(this.slug)));
  }
}
