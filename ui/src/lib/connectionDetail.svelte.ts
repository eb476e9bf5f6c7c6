// The store of one connection's page: its profiles and routing status, and every action of
// the Profiles and Routing screens. Each action reads revisions when it runs, so "reload and
// retry" after a conflict re-applies the same intent to the fresh rows. Secrets pass straight
// through to the command and are never kept here (their actions are not retried).
import { commands, type AffinityMode, type Strategy } from '../bindings';
import { attempt, unwrap, type Failure, type Outcome } from './errors';
import { headerLines, splitLines, splitList, type ConnectionFormValues } from './forms';
import type { Backend } from './connectionList.svelte';
import { VerifyTracker, type Listen } from './verify.svelte';
import type {
  ConnectionDetail,
  ConnectionEditInput,
  CredentialInput,
  BrowserSignInView,
  DeviceCodeView,
  GateView,
  ProfileEditInput,
  ProfileInput,
  ProfileReadiness,
  ProfileView,
  Removal,
  RoutingStatus,
} from './types';

type ActOptions = { retry?: boolean; quiet?: boolean };

export class ConnectionStore {
  detail = $state<ConnectionDetail | null>(null);
  status = $state<RoutingStatus | null>(null);
  error = $state<Failure | null>(null);
  /** The gate report of the last refused activation (cleared by the next status). */
  refusal = $state<GateView | null>(null);
  busy = $state(false);
  readonly verifier: VerifyTracker;

  constructor(
    readonly slug: string,
    private readonly backend: Backend = commands,
    listen?: Listen,
  ) {
    this.verifier = new VerifyTracker(slug, (...a) => this.backend.verify(...a), listen);
  }

  get profiles(): ProfileView[] {
    return this.detail?.profiles ?? [];
  }

  readiness(id: string): ProfileReadiness | undefined {
    return this.status?.profiles.find((p) => p.id === id);
  }

  private profile(id: string): ProfileView {
    const p = this.profiles.find((x) => x.id === id);
    if (!p) throw new Error(`profile ${id} is no longer listed; reload`);
    return p;
  }

  /** Reloads the connection and its routing status. */
  async refresh(): Promise<boolean> {
    const [detail, status] = await Promise.all([
      attempt(() => unwrap(this.backend.connectionShow(this.slug))),
      attempt(() => unwrap(this.backend.routingStatus(this.slug))),
    ]);
    if (detail.ok) this.detail = detail.data;
    if (status.ok) this.status = status.data;
    const failed = !detail.ok ? detail : !status.ok ? status : null;
    if (failed && !failed.ok) {
      this.error = { ...failed.failure, retry: () => this.refresh() };
      return false;
    }
    return true;
  }

  /** Runs an action, then reloads. A failure is returned, and shown on the page unless `quiet`. */
  private async act<T>(action: () => Promise<T>, opts: ActOptions = {}): Promise<Outcome<T>> {
    this.busy = true;
    try {
      const out = await attempt(action);
      if (out.ok) {
        this.error = null;
        await this.refresh();
        return out;
      }
      const retry =
        opts.retry !== false && out.failure.code === 'conflict'
          ? async () => {
              if (await this.refresh()) return this.act(action, opts);
            }
          : undefined;
      const failure: Failure = { ...out.failure, retry };
      if (!opts.quiet) this.error = failure;
      return { ok: false, failure };
    } finally {
      this.busy = false;
    }
  }

  editConnection(v: ConnectionFormValues): Promise<Outcome<unknown>> {
    return this.act(
      () => {
        const c = this.detail?.connection;
        const edit: ConnectionEditInput = {
          protocol: v.protocol,
          base_url: v.baseUrl.trim(),
          models: splitList(v.models),
          mappings: splitLines(v.mappings),
          headers: headerLines(v.headers),
          if_revision: c?.revision ?? null,
        };
        return unwrap(this.backend.connectionEdit(this.slug, edit));
      },
      { quiet: true },
    );
  }

  /** Removes the connection (no reload afterwards: the page closes). */
  async removeConnection(): Promise<Outcome<Removal>> {
    this.busy = true;
    const out = await attempt(() => unwrap(this.backend.connectionRemove(this.slug)));
    this.busy = false;
    return out;
  }

  /** Adds a profile: an API key (`credential` null), a token, or an external sign-in (no secret). */
  addProfile(input: ProfileInput, secret: string | null, credential: CredentialInput | null = null): Promise<Outcome<ProfileView>> {
    return this.act(() => unwrap(this.backend.profileAdd(this.slug, input, secret, credential)), { retry: false, quiet: true });
  }

  editProfile(id: string, edit: Omit<ProfileEditInput, 'if_revision' | 'make_primary'> & { make_primary?: boolean }, quiet = false) {
    return this.act(
      () => {
        const full: ProfileEditInput = { make_primary: false, ...edit, if_revision: this.profile(id).revision };
        return unwrap(this.backend.profileEdit(this.slug, id, full));
      },
      { quiet },
    );
  }

  setEnabled(id: string, enabled: boolean) {
    return this.editProfile(id, { enabled });
  }

  makePrimary(id: string) {
    return this.editProfile(id, { make_primary: true });
  }

  setWeight(id: string, weight: number) {
    return this.editProfile(id, { weight });
  }

  /** New priority order (first is tried first); revisions are read when it runs. */
  reorder(ids: string[]): Promise<Outcome<ProfileView[]>> {
    return this.act(() => {
      const order = ids.map((id) => ({ id, revision: this.profile(id).revision }));
      return unwrap(this.backend.profileReorder(this.slug, order));
    });
  }

  /** Moves a profile `delta` places in the priority order. */
  move(id: string, delta: number): Promise<Outcome<ProfileView[]>> | null {
    const ids = this.profiles.map((p) => p.id);
    const from = ids.indexOf(id);
    const to = from + delta;
    if (from < 0 || to < 0 || to >= ids.length) return null;
    ids.splice(from, 1);
    ids.splice(to, 0, id);
    return this.reorder(ids);
  }

  /** Replaces a key or a token; `expires` (RFC 3339) is a new token's expiry. */
  rotate(id: string, secret: string, expires: string | null = null): Promise<Outcome<ProfileView>> {
    this.verifier.forget(id);
    return this.act(() => unwrap(this.backend.profileRotate(this.slug, id, secret, expires)), { retry: false, quiet: true });
  }

  /** The terminal command that signs an external profile in again (the window cannot host the CLI's login). */
  loginCommand(id: string): Promise<Outcome<string>> {
    return attempt(() => unwrap(this.backend.profileLoginCommand(this.slug, id)));
  }

  /** "Check again": re-reads an external profile's login (a `precondition` failure while still not signed in). */
  checkLogin(id: string): Promise<Outcome<ProfileView>> {
    return this.act(() => unwrap(this.backend.profileCheckLogin(this.slug, id)), { retry: false, quiet: true });
  }

  /** An owned login's sign-in: the device code to show. */
  oauthBegin(id: string): Promise<Outcome<DeviceCodeView>> {
    return attempt(() => unwrap(this.backend.profileOauthBegin(this.slug, id)));
  }

  /** An owned login's browser sign-in: the authorize address to open. */
  oauthBrowserBegin(id: string): Promise<Outcome<BrowserSignInView>> {
    return attempt(() => unwrap(this.backend.profileOauthBrowserBegin(this.slug, id)));
  }

  /** Waits for the browser sign-in to come back: the signed-in profile. */
  oauthBrowserWait(id: string): Promise<Outcome<ProfileView>> {
    return attempt(() => unwrap(this.backend.profileOauthBrowserWait(this.slug, id)));
  }

  /** Whether the device code was approved (a `precondition` failure while it is not yet). */
  oauthCheck(id: string): Promise<Outcome<ProfileView>> {
    return this.act(() => unwrap(this.backend.profileOauthCheck(this.slug, id)), { retry: false, quiet: true });
  }

  removeProfile(id: string): Promise<Outcome<Removal>> {
    this.verifier.forget(id);
    return this.act(() => unwrap(this.backend.profileRemove(this.slug, id)), { quiet: true });
  }

  /** Verifies one profile, or all with `null`; reloads the status afterwards. */
  async verify(profile: string | null, deep: boolean) {
    const targets = profile === null ? this.profiles.map((p) => p.id) : [profile];
    const out = await this.verifier.run(targets, profile, deep);
    if (out.ok) {
      this.status = out.data.routing;
      this.refusal = null;
      await this.refresh();
    } else {
      this.error = out.failure;
    }
    return out;
  }

  async activate(mode: Strategy) {
    const out = await this.act(() => unwrap(this.backend.routingActivate(this.slug, mode)));
    this.refusal = out.ok ? null : out.failure.gates;
    return out;
  }

  deactivate() {
    this.refusal = null;
    return this.act(() => unwrap(this.backend.routingDeactivate(this.slug)));
  }

  /** Sets balanced routing's affinity (and, when given, the conversation window in minutes). */
  setAffinity(mode: AffinityMode, windowMin: number | null): Promise<Outcome<RoutingStatus>> {
    return this.act(() => unwrap(this.backend.routingAffinity(this.slug, mode, windowMin)), { quiet: true });
  }

  resetHealth(id: string, model: string | null) {
    return this.act(() => unwrap(this.backend.healthReset(this.slug, id, model)));
  }
}
