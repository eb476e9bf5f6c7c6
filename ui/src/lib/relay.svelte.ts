// The relay's status (kept current by the `relay-status-changed` event) and its token. The
// token is fetched through `relay_token` only when the user reveals or copies it, and kept
// only while it is revealed.
import { commands, events } from '../bindings';
import { attempt, unwrap, type Failure, type Outcome } from './errors';
import { copyText } from './relay';
import type { RelayStatus } from './types';

export type Backend = Pick<typeof commands, 'relayStatus' | 'relayToken' | 'relaySetPort' | 'relayRestart'>;
export type ListenStatus = (cb: (e: { payload: { status: RelayStatus } }) => void) => Promise<() => void>;

export class RelayStore {
  status = $state<RelayStatus | null>(null);
  /** The token while revealed; `null` when hidden. */
  token = $state<string | null>(null);
  busy = $state(false);
  error = $state<Failure | null>(null);
  /** What the last copy did, for a short confirmation. */
  copied = $state<string | null>(null);
  private unlisten: (() => void) | null = null;

  constructor(
    private readonly backend: Backend = commands,
    private readonly listen: ListenStatus = (cb) => events.relayStatusChanged.listen(cb),
  ) {}

  /** Loads the status and follows its changes; returns the stop function. */
  async start(): Promise<() => void> {
    if (!this.unlisten) {
      this.unlisten = await this.listen((e) => (this.status = e.payload.status)).catch(() => null);
    }
    await this.refresh();
    return () => this.stopListening();
  }

  stopListening(): void {
    this.unlisten?.();
    this.unlisten = null;
  }

  async refresh(): Promise<void> {
    const out = await attempt(() => this.backend.relayStatus());
    if (out.ok) this.status = out.data;
    else this.error = out.failure;
  }

  /** Fetches the token for one use (reveal or copy). */
  private fetchToken(rotate = false): Promise<Outcome<string>> {
    return attempt(() => unwrap(this.backend.relayToken(rotate)));
  }

  async reveal(): Promise<void> {
    const out = await this.fetchToken();
    if (out.ok) this.token = out.data;
    else this.error = out.failure;
  }

  hide(): void {
    this.token = null;
  }

  /**
   * Copies `render(token)` (the token alone by default) and names what was copied; the token
   * is fetched for the copy and not kept unless revealed.
   */
  async copy(what: string, render: (token: string) => string = (t) => t): Promise<boolean> {
    const out = await this.fetchToken();
    if (!out.ok) {
      this.error = out.failure;
      return false;
    }
    const ok = await copyText(render(out.data));
    this.copied = ok ? what : null;
    if (!ok) this.error = { code: 'internal', title: 'Could not copy.', message: 'The clipboard refused the text; reveal it and copy by hand.', gates: null };
    return ok;
  }

  /** Replaces the token; the relay restarts and accepts only the new one. */
  async rotate(): Promise<Outcome<string>> {
    this.busy = true;
    const out = await this.fetchToken(true);
    this.busy = false;
    if (!out.ok) {
      this.error = out.failure;
      return out;
    }
    this.error = null;
    if (this.token !== null) this.token = out.data;
    await this.refresh();
    return out;
  }

  async setPort(port: number): Promise<Outcome<RelayStatus>> {
    this.busy = true;
    const out = await attempt(() => unwrap(this.backend.relaySetPort(port)));
    this.busy = false;
    if (out.ok) {
      this.status = out.data;
      this.error = null;
    }
    return out;
  }

  async restart(): Promise<void> {
    this.busy = true;
    const out = await attempt(() => unwrap(this.backend.relayRestart()));
    this.busy = false;
    if (out.ok) this.status = out.data;
    else this.error = out.failure;
  }
}
