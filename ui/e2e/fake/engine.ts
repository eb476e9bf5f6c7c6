// A fake Switchyard engine behind mocked IPC, for flow tests of the built UI: the same
// commands, argument names and error shape as the Tauri shell, state in memory, and a script
// that tests set (verify outcomes, delays, one-shot errors). It keeps secrets like a keychain
// would: accepted, never returned.
import type {
  ConnectionDetail,
  ConnectionEditInput,
  ConnectionInput,
  CredentialInput,
  IpcError,
  OfficialClient,
  OrderInput,
  ProfileEditInput,
  ProfileInput,
  Removal,
  VerifyEvent,
  VerifyResult,
} from '../../src/lib/types';
import {
  DEFAULT_AFFINITY,
  gates,
  profileView,
  reconcile,
  routingStatus,
  type FakeConnection,
  type FakeProfile,
} from './readiness';
import { FakeAutostart } from './autostart';
import { FakePortable } from './portable';
import { FakeQuota } from './quota';
import { FakeUsage } from './usage';
import { FakeRelay } from './relay';

export type VerifyScript = { outcome: 'verified' | 'auth_invalid' | 'unverified'; kind?: string; supported?: string[] };
export type Emit = (event: string, payload: unknown) => Promise<void>;

const CREDENTIAL_HEADERS = ['authorization', 'proxy-authorization', 'x-api-key', 'api-key', 'cookie'];

function fail(code: IpcError['code'], message: string, extra: Partial<IpcError> = {}): never {
  throw { code, message, gates: null, ...extra } satisfies IpcError;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class FakeEngine {
  connections: FakeConnection[] = [];
  profiles: FakeProfile[] = [];
  /** Per profile label: what verification finds (default: verified, every model listed). */
  verifyScript: Record<string, VerifyScript> = {};
  /** Per profile verification time in ms, so progress is visible. */
  verifyDelayMs = 120;
  /** One-shot errors by command name. */
  failNext: Record<string, IpcError> = {};
  private keychain = new Map<string, string>();
  private seq = 0;
  /** The relay and the attempt ledger (`relay_*`, `attempts`, traffic hooks). */
  readonly relay: FakeRelay;
  /** Export, import and the save/open dialogs. */
  readonly portable: FakePortable;
  /** The limit readings `quota` answers with. */
  readonly quota: FakeQuota;
  /** The usage chart `usage_chart` answers with, summed from the fake ledger. */
  readonly usage: FakeUsage;
  /** Whether the app starts with the system (`autostart_*`). */
  readonly autostart = new FakeAutostart();

  constructor(private readonly emit: Emit) {
    this.relay = new FakeRelay(this, emit);
    this.portable = new FakePortable(this);
    this.quota = new FakeQuota(this);
    this.usage = new FakeUsage(this);
  }

  private id(prefix: string): string {
    this.seq += 1;
    return `${prefix}_${String(this.seq).padStart(4, '0')}`;
  }

  private conn(slug: string): FakeConnection {
    return this.connections.find((c) => c.slug === slug) ?? fail('not_found', `connection '${slug}' not found`);
  }

  private profilesOf(c: FakeConnection): FakeProfile[] {
    return this.profiles.filter((p) => p.connectionId === c.id).sort((a, b) => a.priority - b.priority || a.id.localeCompare(b.id));
  }

  private profile(c: FakeConnection, ref: string): FakeProfile {
    return (
      this.profilesOf(c).find((p) => p.id === ref || p.label === ref) ??
      fail('not_found', `profile '${ref}' in connection '${c.slug}' not found`)
    );
  }

  private detail(c: FakeConnection): ConnectionDetail {
    const ps = this.profilesOf(c);
    return {
      connection: {
        id: c.id,
        slug: c.slug,
        protocol: c.protocol,
        base_url: c.baseUrl,
        headers: c.headers,
        models: c.models,
        mapping: c.mapping,
        basis_fingerprint: `basis-${c.basis}`,
        routing_mode: c.mode,
        routing_state: c.state,
        revision: c.revision,
        profile_count: ps.length,
        created_at: c.createdAt,
        updated_at: c.updatedAt,
      },
      profiles: ps.map(profileView),
    };
  }

  private newProfile(c: FakeConnection, label: string, secret: string, weight = 1, priority?: number | null): FakeProfile {
    if (secret.trim().length === 0) fail('invalid', 'secret is empty');
    if (this.profilesOf(c).some((p) => p.label === label)) fail('conflict', `label '${label}' already exists`);
    if (label.trim() === '') fail('invalid', 'label must not be empty');
    const now = new Date().toISOString();
    const ps = this.profilesOf(c);
    const p: FakeProfile = {
      id: this.id('p'),
      connectionId: c.id,
      label,
      weight,
      priority: priority ?? ps.reduce((m, x) => Math.max(m, x.priority + 1), 0),
      enabled: true,
      primary: !ps.some((x) => x.primary),
      hasSecret: true,
      credentialRevision: 1,
      revision: 1,
      createdAt: now,
      updatedAt: now,
      evidence: null,
      health: [],
    };
    this.keychain.set(p.id, secret);
    this.profiles.push(p);
    return p;
  }

  private parseHeaders(lines: string[]): { name: string; value: string }[] {
    return lines.map((l) => {
      const at = l.indexOf(':');
      if (at < 1) fail('invalid', `header '${l}' must look like 'Name: value'`);
      const name = l.slice(0, at).trim().toLowerCase();
      const value = l.slice(at + 1).trim();
      if (CREDENTIAL_HEADERS.includes(name)) fail('invalid', `'${name}' carries a credential; add keys as profiles`);
      if (/^(sk-|sk_|bearer |basic )/i.test(value)) fail('invalid', `value of '${name}' looks like a secret; add keys as profiles`);
      return { name, value };
    });
  }

  private parseMappings(lines: string[]): { from: string; to: string }[] {
    return lines.map((l) => {
      const [from, to] = l.split('=').map((s) => s.trim());
      if (!from || !to) fail('invalid', `mapping '${l}' must look like FROM=TO`);
      return { from, to };
    });
  }

  /** Handles one IPC command like the Tauri shell would. */
  async handle(cmd: string, args: Record<string, unknown>): Promise<unknown> {
    const oneShot = this.failNext[cmd];
    if (oneShot) {
      delete this.failNext[cmd];
      throw oneShot;
    }
    const a = args as Record<string, never>;
    if (this.relay.handles(cmd)) return this.relay.handle(cmd, a);
    if (this.portable.handles(cmd)) return this.portable.handle(cmd, a);
    if (this.quota.handles(cmd)) return this.quota.handle(cmd, a);
    if (this.usage.handles(cmd)) return this.usage.handle(cmd, a);
    if (this.autostart.handles(cmd)) return this.autostart.handle(cmd, a);
    switch (cmd) {
      case 'app_info':
        return { version: '0.1.0-e2e', data_dir: '/tmp/switchyard-e2e' };
      case 'list_connections':
        return this.connections.map((c) => this.detail(c));
      case 'connection_show':
        return this.detail(this.conn(a.slug));
      case 'connection_add':
        return this.connectionAdd(a.input, a.secret);
      case 'connection_edit':
        return this.connectionEdit(a.slug, a.edit);
      case 'connection_remove':
        return this.connectionRemove(a.slug);
      case 'profile_add':
        return this.profileAdd(a.slug, a.input, a.secret ?? null, a.credential ?? null);
      case 'profile_edit':
        return this.profileEdit(a.slug, a.profile, a.edit);
      case 'profile_reorder':
        return this.profileReorder(a.slug, a.order);
      case 'profile_rotate':
        return this.profileRotate(a.slug, a.profile, a.secret, a.expires ?? null);
      case 'profile_login_command':
        return this.loginCommand(a.slug, a.profile);
      case 'profile_check_login':
        return this.checkLogin(a.slug, a.profile);
      case 'profile_remove':
        return this.profileRemove(a.slug, a.profile);
      case 'verify':
        return this.verify(a.slug, a.profile, a.deep);
      case 'routing_status': {
        const c = this.conn(a.slug);
        reconcile(c, this.profilesOf(c));
        return routingStatus(c, this.profilesOf(c));
      }
      case 'routing_activate':
        return this.activate(a.slug, a.mode);
      case 'routing_deactivate': {
        const c = this.conn(a.slug);
        Object.assign(c, { mode: 'legacy', state: 'active', note: null, activatedAt: null, activatedBy: null });
        c.revision += 1;
        return routingStatus(c, this.profilesOf(c));
      }
      case 'routing_affinity':
        return this.setAffinity(a.slug, a.mode, a.windowMin);
      // Fallback chains: stored as given, never activated (the fake proves no hop's evidence).
      case 'fallback_status':
        return this.fallback(a.slug);
      case 'fallback_set':
        this.conn(a.slug);
        this.chains.set(a.slug, a.hops);
        return this.fallback(a.slug);
      case 'fallback_activate':
        return fail('precondition', `cannot activate the fallback chain of '${a.slug}': hops have no current evidence`);
      case 'fallback_deactivate':
        return this.fallback(a.slug);
      case 'key_checks':
        return [];
      case 'health_reset': {
        const p = this.profile(this.conn(a.slug), a.profile);
        p.health = a.model === null ? [] : p.health.filter((h) => h.model !== a.model);
        return null;
      }
      default:
        return fail('internal', `the fake engine does not know '${cmd}'`);
    }
  }

  private chains = new Map<string, string[]>();

  private fallback(slug: string) {
    this.conn(slug);
    const hops = this.chains.get(slug) ?? [];
    const chain = hops.map((h) => ({ slug: h.split('=')[0], model: h.includes('=') ? h.slice(h.indexOf('=') + 1) : null }));
    const failures = chain.length === 0 ? ['no fallback chain'] : chain.map((h) => `hop ${h.slug}: no current evidence`);
    return { chain, active: false, activated: false, activated_at: null, pending: false, note: null, gates: { ok: false, models: [], failures } };
  }

  /** Like `Engine::set_affinity`: checks the mode and the window (1–1440), keeps the window when none is given. */
  private setAffinity(slug: string, mode: string, windowMin: number | null) {
    if (mode !== 'conversation' && mode !== 'turn') fail('invalid', `affinity: '${mode}' is not an affinity; use turn or conversation`);
    if (windowMin !== null && windowMin !== undefined && (windowMin < 1 || windowMin > 1440)) {
      fail('invalid', `window_min: must be between 1 and 1440 minutes (got ${windowMin})`);
    }
    const c = this.conn(slug);
    const before = c.affinity ?? DEFAULT_AFFINITY;
    c.affinity = { mode, window_min: windowMin ?? before.window_min };
    return routingStatus(c, this.profilesOf(c));
  }

  private connectionAdd(input: ConnectionInput, secret: string | null): ConnectionDetail {
    if (!/^[a-z0-9][a-z0-9-]*$/.test(input.slug)) fail('invalid', `slug '${input.slug}' must be lower-case letters, digits and dashes`);
    if (this.connections.some((c) => c.slug === input.slug)) fail('conflict', `slug '${input.slug}' already exists`);
    if (!['openai', 'anthropic'].includes(input.protocol)) fail('invalid', `unknown protocol '${input.protocol}'`);
    if (!/^https?:\/\//.test(input.base_url)) fail('invalid', 'base URL must start with http:// or https://');
    const now = new Date().toISOString();
    const c: FakeConnection = {
      id: this.id('c'),
      slug: input.slug,
      protocol: input.protocol,
      baseUrl: input.base_url.replace(/\/$/, ''),
      headers: this.parseHeaders(input.headers),
      models: input.models,
      mapping: this.parseMappings(input.mappings),
      basis: 1,
      revision: 1,
      mode: 'legacy',
      state: 'active',
      note: null,
      activatedAt: null,
      activatedBy: null,
      createdAt: now,
      updatedAt: now,
    };
    this.connections.push(c);
    if (secret !== null) this.newProfile(c, 'primary', secret, 1, 0);
    return this.detail(c);
  }

  private connectionEdit(slug: string, edit: ConnectionEditInput) {
    const c = this.conn(slug);
    if (edit.if_revision != null && edit.if_revision !== c.revision) {
      fail('conflict', `connection changed since it was read (revision ${edit.if_revision} expected, ${c.revision} found); reload and retry`);
    }
    const headers = edit.headers != null ? this.parseHeaders(edit.headers) : c.headers;
    const basisChanged =
      (edit.base_url != null && edit.base_url !== c.baseUrl) ||
      (edit.protocol != null && edit.protocol !== c.protocol) ||
      JSON.stringify(headers) !== JSON.stringify(c.headers);
    c.baseUrl = edit.base_url ?? c.baseUrl;
    c.protocol = edit.protocol ?? c.protocol;
    c.headers = headers;
    c.models = edit.models ?? c.models;
    c.mapping = edit.mappings != null ? this.parseMappings(edit.mappings) : c.mapping;
    if (basisChanged) c.basis += 1;
    c.revision += 1;
    reconcile(c, this.profilesOf(c));
    return this.detail(c).connection;
  }

  private connectionRemove(slug: string): Removal {
    const c = this.conn(slug);
    const ps = this.profilesOf(c);
    for (const p of ps) this.keychain.delete(p.id);
    this.profiles = this.profiles.filter((p) => p.connectionId !== c.id);
    this.connections = this.connections.filter((x) => x !== c);
    return { slug, profiles_removed: ps.length, secrets_deleted: ps.length, secrets_pending: 0 };
  }

  private profileEdit(slug: string, ref: string, edit: ProfileEditInput) {
    const c = this.conn(slug);
    const p = this.profile(c, ref);
    if (edit.if_revision != null && edit.if_revision !== p.revision) {
      fail('conflict', `profile changed since it was read (revision ${edit.if_revision} expected, ${p.revision} found); reload and retry`);
    }
    const enabled = edit.enabled ?? p.enabled;
    if (!enabled && p.primary && !edit.make_primary) fail('precondition', `'${p.label}' is the primary profile of '${slug}'; make another profile primary first`);
    if (edit.weight != null && edit.weight < 1) fail('invalid', `weight must be at least 1 (got ${edit.weight})`);
    if (edit.label != null && edit.label !== p.label && this.profilesOf(c).some((x) => x.label === edit.label)) {
      fail('conflict', `label '${edit.label}' already exists`);
    }
    Object.assign(p, {
      label: edit.label ?? p.label,
      weight: edit.weight ?? p.weight,
      priority: edit.priority ?? p.priority,
      enabled,
      revision: p.revision + 1,
      updatedAt: new Date().toISOString(),
    });
    if (edit.make_primary && !p.primary) {
      for (const x of this.profilesOf(c)) if (x.primary) Object.assign(x, { primary: false, revision: x.revision + 1 });
      Object.assign(p, { primary: true, revision: p.revision + 1 });
    }
    reconcile(c, this.profilesOf(c));
    return profileView(p);
  }

  private profileReorder(slug: string, order: OrderInput[]) {
    const c = this.conn(slug);
    const ps = this.profilesOf(c);
    if (order.length !== ps.length) fail('invalid', `order must name each of the ${ps.length} profiles of '${slug}' exactly once`);
    order.forEach((o) => {
      const p = this.profile(c, o.id);
      if (p.revision !== o.revision) fail('conflict', `profile changed since it was read (revision ${o.revision} expected, ${p.revision} found); reload and retry`);
    });
    order.forEach((o, i) => {
      const p = this.profile(c, o.id);
      if (p.priority !== i) Object.assign(p, { priority: i, revision: p.revision + 1 });
    });
    return this.profilesOf(c).map(profileView);
  }

  /** Like `Engine::profile_add_kind`: an API key or a token with its secret, an external sign-in without one. */
  private profileAdd(slug: string, input: ProfileInput, secret: string | null, credential: CredentialInput | null) {
    const c = this.conn(slug);
    const kind = credential?.kind ?? 'api_key';
    if (!['api_key', 'token', 'external'].includes(kind)) fail('invalid', `kind: '${kind}' is not a kind you can add; use api_key, token or external`);
    if (kind === 'api_key') {
      if (secret === null) fail('invalid', 'secret: required: pass --secret-stdin or --secret-env NAME');
      return profileView(this.newProfile(c, input.label, secret, input.weight ?? 1, input.priority));
    }
    const client = (credential?.client ?? 'claude-code') as OfficialClient;
    const speaks = client === 'codex' ? 'openai' : 'anthropic';
    if (speaks !== c.protocol) fail('invalid', `client: ${client} speaks the ${speaks} protocol; connection '${slug}' is ${c.protocol}`);
    if (kind === 'external') {
      if (secret !== null) fail('invalid', `secret: an external profile takes no secret: the official CLI signs in with switchyard profile login ${slug} LABEL`);
      const p = this.newProfile(c, input.label, 'unused', input.weight ?? 1, input.priority);
      this.keychain.delete(p.id);
      Object.assign(p, { kind, client, hasSecret: false, signedIn: false });
      return profileView(p);
    }
    if (secret === null || secret.trim() === '') fail('invalid', 'secret: required: pass --secret-stdin or --secret-env NAME');
    if (/\s/.test(secret.trim())) fail('invalid', 'secret: the token contains spaces or line breaks; paste the token alone, on one line');
    if (secret.startsWith('sk-ant-api')) fail('invalid', 'secret: this is an API key, not a subscription token; add it with --kind api_key');
    const expiresAt = this.expiry(credential?.expires_at ?? null);
    const p = this.newProfile(c, input.label, secret, input.weight ?? 1, input.priority);
    Object.assign(p, { kind, client, expiresAt });
    return profileView(p);
  }

  /** An expiry as the engine checks it: RFC 3339, in the future. */
  private expiry(iso: string | null): number | null {
    if (iso === null) return null;
    const at = Date.parse(iso);
    if (Number.isNaN(at)) fail('invalid', `expires: '${iso}' is not an RFC 3339 time`);
    if (at <= Date.now()) fail('invalid', 'expires: the expiry has passed; a token pasted already expired is a mistake');
    return at;
  }

  private profileRotate(slug: string, ref: string, secret: string, expires: string | null) {
    const c = this.conn(slug);
    const p = this.profile(c, ref);
    if (p.kind === 'external') {
      fail('precondition', `'${p.label}' is an external profile: it has no secret to replace; sign in again with switchyard profile login ${slug} ${p.label}`);
    }
    if (secret.trim().length === 0) fail('invalid', 'secret is empty');
    const expiresAt = p.kind === 'token' ? this.expiry(expires) : null;
    this.keychain.set(p.id, secret);
    Object.assign(p, { credentialRevision: p.credentialRevision + 1, revision: p.revision + 1, health: [], hasSecret: true, expiresAt });
    reconcile(c, this.profilesOf(c));
    return profileView(p);
  }

  /** Like `Engine::profile_login_command` (the fake's data dir is the CLI's default: no --data-dir). */
  private loginCommand(slug: string, ref: string): string {
    const c = this.conn(slug);
    const p = this.profile(c, ref);
    if (p.kind === 'token') fail('precondition', `'${p.label}' is a token profile: paste a new token instead of signing in`);
    if (p.kind !== 'external') fail('precondition', `'${p.label}' is an API key profile: there is nothing to sign in to; replace its key`);
    const quote = (w: string) => (/^[A-Za-z0-9\-_./:@%+=,]+$/.test(w) ? w : `'${w.replaceAll("'", "'\\''")}'`);
    return ['switchyard', 'profile', 'login', c.slug, p.label].map(quote).join(' ');
  }

  /** Like `Engine::profile_login_finished`: the profile, or `precondition` while not signed in. */
  private checkLogin(slug: string, ref: string) {
    const c = this.conn(slug);
    const p = this.profile(c, ref);
    reconcile(c, this.profilesOf(c));
    if (p.kind === 'external' && !p.signedIn) {
      fail('precondition', `the login did not leave .credentials.json in /tmp/switchyard-e2e/accounts/${p.id}; '${p.label}' is still not signed in`);
    }
    return profileView(p);
  }

  /** Test hook: the official CLI signed in (or out) in an external profile's directory. */
  signIn(slug: string, label: string, on = true): void {
    this.profile(this.conn(slug), label).signedIn = on;
  }

  /** Test hook: a token's expiry moved to `ms` from now (negative: past). */
  expireIn(slug: string, label: string, ms: number): void {
    this.profile(this.conn(slug), label).expiresAt = Date.now() + ms;
  }

  private profileRemove(slug: string, ref: string): Removal {
    const c = this.conn(slug);
    const p = this.profile(c, ref);
    if (p.primary) fail('precondition', `'${p.label}' is the primary profile of '${slug}'; make another profile primary first`);
    this.keychain.delete(p.id);
    this.profiles = this.profiles.filter((x) => x !== p);
    reconcile(c, this.profilesOf(c));
    return { slug, profiles_removed: 1, secrets_deleted: 1, secrets_pending: 0 };
  }

  private async verify(slug: string, ref: string | null, deep: boolean) {
    const c = this.conn(slug);
    const targets = ref === null ? this.profilesOf(c) : [this.profile(c, ref)];
    const total = targets.length;
    const results: VerifyResult[] = [];
    let done = 0;
    for (const [i, p] of targets.entries()) {
      await this.emitProgress(slug, { event: 'started', profile_id: p.id, label: p.label, index: i + 1, total });
      await sleep(this.verifyDelayMs);
      const result = this.verifyOne(c, p, deep);
      results.push(result);
      done += 1;
      await this.emitProgress(slug, { event: 'finished', result, done, total });
    }
    reconcile(c, this.profilesOf(c));
    results.sort((x, y) => x.label.localeCompare(y.label));
    return { slug, results, routing: routingStatus(c, this.profilesOf(c)), routing_restored: null };
  }

  private verifyOne(c: FakeConnection, p: FakeProfile, deep: boolean): VerifyResult {
    const script = this.verifyScript[p.label] ?? { outcome: 'verified' };
    const base = { profile_id: p.id, label: p.label };
    if (script.outcome === 'unverified') {
      const kind = script.kind ?? 'network';
      return { ...base, outcome: 'unverified', models: [], failure_kind: kind, detail: `models listing failed (${kind}); no evidence recorded` };
    }
    const at = new Date().toISOString();
    if (script.outcome === 'auth_invalid') {
      p.evidence = { credentialRevision: p.credentialRevision, basis: c.basis, at, outcome: 'auth_invalid', models: [] };
      return { ...base, outcome: 'auth_invalid', models: [], failure_kind: 'auth_invalid', detail: 'the provider refused the key (HTTP 401)' };
    }
    const supported = script.supported ?? c.models;
    const models = c.models.map((model) => ({
      model,
      source: deep ? 'probed' : 'listed',
      supported: supported.includes(model),
      failure_kind: supported.includes(model) ? null : 'model_forbidden',
    }));
    p.evidence = { credentialRevision: p.credentialRevision, basis: c.basis, at, outcome: 'ok', models };
    p.health = p.health.filter((h) => h.kind !== 'auth_invalid');
    return { ...base, outcome: 'verified', models, failure_kind: null, detail: `${models.filter((m) => m.supported).length} models` };
  }

  private emitProgress(slug: string, progress: VerifyEvent): Promise<void> {
    return this.emit('verify-progress', { slug, progress });
  }

  private activate(slug: string, mode: string) {
    const c = this.conn(slug);
    if (mode !== 'balanced' && mode !== 'priority') fail('invalid', 'activate takes balanced or priority');
    const g = gates(c, this.profilesOf(c));
    if (!g.ok) fail('precondition', `cannot activate ${mode} routing for '${slug}': ${g.failures.join('; ')}`, { gates: g });
    Object.assign(c, { mode, state: 'active', note: null, activatedAt: new Date().toISOString(), activatedBy: 'desktop' });
    c.revision += 1;
    return routingStatus(c, this.profilesOf(c));
  }

  /** Test hook: a cooldown on a profile's credential-wide circuit (or one model's). */
  coolDown(slug: string, label: string, seconds: number, model: string | null = null, kind = 'rate_limited'): void {
    const p = this.profile(this.conn(slug), label);
    p.health = [...p.health.filter((h) => h.model !== model), { model, state: 'open', kind, until: new Date(Date.now() + seconds * 1000).toISOString() }];
  }

  /** Test hook: bump a profile's revision as if another window edited it. */
  touch(slug: string, label: string): void {
    const p = this.profile(this.conn(slug), label);
    p.revision += 1;
  }
}
