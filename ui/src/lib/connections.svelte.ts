// The connections store: wraps the generated `listConnections` binding and keeps the last
// result, the loading flag and a readable error (by error code, never by message text).
import { commands, type ConnectionDetail, type IpcError } from '../bindings';

export type Loader = () => Promise<{ status: 'ok'; data: ConnectionDetail[] } | { status: 'error'; error: IpcError }>;

const ERROR_TEXT: Record<IpcError['code'], string> = {
  invalid: 'Some input was not valid.',
  conflict: 'The data changed elsewhere; reload and retry.',
  not_found: 'It no longer exists.',
  precondition: 'A precondition does not hold.',
  keychain_unavailable: 'The OS keychain is locked or unavailable.',
  internal: 'Something went wrong inside Switchyard.',
};

export function describeError(e: IpcError): string {
  return `${ERROR_TEXT[e.code] ?? ERROR_TEXT.internal} ${e.message}`;
}

export class ConnectionsStore {
  items = $state<ConnectionDetail[]>([]);
  loading = $state(false);
  error = $state<string | null>(null);
  loaded = $state(false);

  constructor(private readonly load: Loader = () => commands.listConnections()) {}

  async refresh(): Promise<void> {
    this.loading = true;
    try {
      const result = await this.load();
      if (result.status === 'ok') {
        this.items = result.data;
        this.error = null;
      } else {
        this.error = describeError(result.error);
      }
    } catch (e) {
      this.error = `Could not reach the Switchyard backend: ${String(e)}`;
    } finally {
      this.loading = false;
      this.loaded = true;
    }
  }
}
