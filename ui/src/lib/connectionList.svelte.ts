// The connections store: every connection with its profiles and routing status (for the
// list's badges and readiness), and adding a connection. Wraps the generated bindings.
import { commands } from '../bindings';
import { attempt, unwrap, type Failure, type Outcome } from './errors';
import { headerLines, splitLines, splitList, type ConnectionFormValues } from './forms';
import type { ConnectionDetail, ConnectionInput, RoutingStatus } from './types';

export type Backend = typeof commands;

/** The input of `connection_add` from the form. */
export function connectionInput(v: ConnectionFormValues): ConnectionInput {
  return {
    slug: v.slug.trim(),
    protocol: v.protocol,
    base_url: v.baseUrl.trim(),
    models: splitList(v.models),
    mappings: splitLines(v.mappings),
    headers: headerLines(v.headers),
  };
}

export class ConnectionsStore {
  items = $state<ConnectionDetail[]>([]);
  statuses = $state<Record<string, RoutingStatus>>({});
  loading = $state(false);
  loaded = $state(false);
  error = $state<Failure | null>(null);

  constructor(private readonly backend: Backend = commands) {}

  async refresh(): Promise<void> {
    this.loading = true;
    const listed = await attempt(() => unwrap(this.backend.listConnections()));
    if (listed.ok) {
      this.items = listed.data;
      this.error = null;
      await this.refreshStatuses(listed.data.map((d) => d.connection.slug));
    } else {
      this.error = { ...listed.failure, retry: () => this.refresh() };
    }
    this.loading = false;
    this.loaded = true;
  }

  /** Routing status of each connection; one that fails keeps its previous value. */
  private async refreshStatuses(slugs: string[]): Promise<void> {
    const results = await Promise.all(slugs.map((slug) => attempt(() => unwrap(this.backend.routingStatus(slug)))));
    const next: Record<string, RoutingStatus> = {};
    slugs.forEach((slug, i) => {
      const r = results[i];
      if (r.ok) next[slug] = r.data;
      else if (this.statuses[slug]) next[slug] = this.statuses[slug];
    });
    this.statuses = next;
  }

  /** Adds a connection; a non-empty `secret` becomes its primary profile. */
  async add(values: ConnectionFormValues, secret: string): Promise<Outcome<ConnectionDetail>> {
    const key = secret.length > 0 ? secret : null;
    const added = await attempt(() => unwrap(this.backend.connectionAdd(connectionInput(values), key)));
    if (added.ok) await this.refresh();
    return added;
  }
}
