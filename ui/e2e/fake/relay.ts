// The fake engine's relay and attempt ledger: relay status, token (returned only by
// `relay_token`), port, and `attempts` rows that tests create with hooks (balanced traffic by
// smooth weighted round robin, a failover, a restore), like the real relay would record them.
import type { AttemptView, IpcError, RelayStatus } from '../../src/lib/types';
import type { FakeEngine } from './engine';

function fail(code: IpcError['code'], message: string): never {
  throw { code, message, gates: null } satisfies IpcError;
}

const COMMANDS = ['relay_status', 'relay_token', 'relay_set_port', 'relay_restart', 'attempts'];

export class FakeRelay {
  token = 'sy_fake_initial_5d1c0b7e9a3f42c8b6e0d4a1f7c93e25';
  port = 4141;
  /** When set, the port is taken by another program (status `error`). */
  portTaken = false;
  rows: AttemptView[] = [];
  private rotations = 0;
  private turnSeq = 0;
  private swrr = new Map<string, Map<string, number>>();

  constructor(
    private readonly engine: FakeEngine,
    private readonly emit: (event: string, payload: unknown) => Promise<void>,
  ) {}

  handles(cmd: string): boolean {
    return COMMANDS.includes(cmd);
  }

  status(): RelayStatus {
    const base = { port: this.port, port_source: 'settings' as const };
    if (this.portTaken) {
      return { ...base, state: 'error', url: null, bound_port: null, error: `port ${this.port} is already in use by another program; free it or choose another port` };
    }
    return { ...base, state: 'listening', url: `http://127.0.0.1:${this.port}`, bound_port: this.port, error: null };
  }

  private async changed(): Promise<RelayStatus> {
    const status = this.status();
    await this.emit('relay-status-changed', { status });
    return status;
  }

  async handle(cmd: string, a: Record<string, never>): Promise<unknown> {
    switch (cmd) {
      case 'relay_status':
        return this.status();
      case 'relay_token':
        if (a.rotate) {
          this.rotations += 1;
          this.token = `sy_fake_rotated_${String(this.rotations).padStart(32, '0')}`;
          await this.changed();
        }
        return this.token;
      case 'relay_set_port': {
        const port = a.port as number;
        if (port < 1024 || port > 65535) fail('invalid', `relay_port: must be between 1024 and 65535 (got ${port})`);
        this.port = port;
        this.portTaken = false;
        return this.changed();
      }
      case 'relay_restart':
        return this.changed();
      default: {
        const c = this.engine.connections.find((x) => x.slug === a.slug) ?? fail('not_found', `connection '${a.slug}' not found`);
        return this.rows.filter((r) => r.turn.startsWith(`${c.slug}:`)).slice(0, Math.max(1, Math.min(10_000, a.limit as number)));
      }
    }
  }

  private profilesOf(slug: string) {
    const c = this.engine.connections.find((x) => x.slug === slug) ?? fail('not_found', slug);
    return { c, ps: this.engine.profiles.filter((p) => p.connectionId === c.id) };
  }

  private record(
    row: Omit<
      AttemptView,
      | 'at'
      | 'scope'
      | 'input_tokens'
      | 'output_tokens'
      | 'ttfb_ms'
      | 'duration_ms'
      | 'session'
      | 'conversation'
      | 'moved'
      | 'cache_read_tokens'
      | 'cache_write_tokens'
      | 'prompt_tokens'
      | 'connection'
      | 'tags'
    > &
      Partial<AttemptView>,
  ) {
    const ok = row.failure_kind === null;
    this.rows.unshift({
      at: new Date().toISOString(),
      scope: ok ? null : 'credential',
      ttfb_ms: ok ? 80 + (this.rows.length % 40) : null,
      duration_ms: 120 + (this.rows.length % 90),
      input_tokens: ok ? 12 : null,
      output_tokens: ok ? 30 : null,
      session: null,
      conversation: null,
      moved: null,
      cache_read_tokens: null,
      cache_write_tokens: null,
      prompt_tokens: ok ? 12 : null,
      // Fake turns are `SLUG:tN`.
      connection: row.turn.split(':')[0],
      tags: {},
      ...row,
    });
  }

  /** Smooth weighted round robin over the connection's eligible profiles, as the relay picks. */
  private pick(slug: string, model: string): string {
    const { c, ps } = this.profilesOf(slug);
    const now = Date.now();
    const eligible = ps.filter(
      (p) => p.enabled && p.evidence?.outcome === 'ok' && !p.health.some((h) => h.state !== 'closed' && (!h.until || Date.parse(h.until) > now)),
    );
    if (c.mode === 'legacy' || eligible.length === 0) return ps.find((p) => p.primary)?.id ?? ps[0].id;
    const key = `${slug}/${model}`;
    const current = this.swrr.get(key) ?? new Map<string, number>();
    this.swrr.set(key, current);
    const total = eligible.reduce((s, p) => s + p.weight, 0);
    let best = eligible[0];
    for (const p of eligible) {
      current.set(p.id, (current.get(p.id) ?? 0) + p.weight);
      if ((current.get(p.id) ?? 0) > (current.get(best.id) ?? 0)) best = p;
    }
    current.set(best.id, (current.get(best.id) ?? 0) - total);
    return best.id;
  }

  /** Test hook: `turns` fresh turns of `model` through the relay, each served on its first attempt. */
  traffic(slug: string, turns: number, model = 'gpt-a'): void {
    const { c } = this.profilesOf(slug);
    for (let i = 0; i < turns; i += 1) {
      this.turnSeq += 1;
      const profile = this.pick(slug, model);
      const reason = c.mode === 'legacy' ? 'legacy_primary' : c.mode === 'priority' ? 'priority' : 'swrr';
      this.record({ turn: `${slug}:t${this.turnSeq}`, attempt: 1, profile, reason, model, status: 200, failure_kind: null });
    }
  }

  /** Test hook: one turn that `from` fails with `kind` (it starts cooling down) and `to` serves. */
  failover(slug: string, from: string, to: string, kind = 'rate_limited', model = 'gpt-a', cooldownSecs = 30): void {
    const { ps } = this.profilesOf(slug);
    const byLabel = (l: string) => ps.find((p) => p.label === l) ?? fail('not_found', l);
    this.turnSeq += 1;
    const turn = `${slug}:t${this.turnSeq}`;
    this.record({ turn, attempt: 1, profile: byLabel(from).id, reason: 'swrr', model, status: 429, failure_kind: kind });
    this.record({ turn, attempt: 2, profile: byLabel(to).id, reason: `failover:${kind}`, model, status: 200, failure_kind: null });
    this.engine.coolDown(slug, from, cooldownSecs, null, kind);
  }

  /** Test hook: `label`'s recovery probe succeeds and its circuit closes. */
  restore(slug: string, label: string, model = 'gpt-a'): void {
    const { ps } = this.profilesOf(slug);
    const p = ps.find((x) => x.label === label) ?? fail('not_found', label);
    p.health = [];
    this.turnSeq += 1;
    this.record({ turn: `${slug}:t${this.turnSeq}`, attempt: 1, profile: p.id, reason: 'probe', model, status: 200, failure_kind: null });
  }
}
