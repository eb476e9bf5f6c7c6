// The Activity screen's store: polls the attempt ledger (`attempts`) once a second while the
// screen is shown and the window visible, marks rows that arrived since the last poll, and
// keeps the failover and restore events seen so far (so they stay listed after their rows
// scroll out of the fetched window under heavy traffic).
import { commands } from '../bindings';
import { activityEvents, fetchLimit, rowKey, type ActivityEvent } from './activity';
import { attempt, unwrap, type Failure } from './errors';
import type { AttemptView } from './types';
import { VisiblePoller } from './poller';

type AttemptsCall = (typeof commands)['attempts'];

/** Events kept in the feed. */
const MAX_EVENTS = 30;
/** Rows shown in the table. */
export const TABLE_ROWS = 60;

export class ActivityStore {
  rows = $state<AttemptView[]>([]);
  /** Keys of rows that arrived with the last poll (empty after the first load). */
  fresh = $state<Set<string>>(new Set());
  events = $state<ActivityEvent[]>([]);
  /** Keys of events that appeared while the screen was open (not in the first load). */
  newEvents = $state<Set<string>>(new Set());
  error = $state<Failure | null>(null);
  loaded = $state(false);
  /** Turns the chart covers. */
  window = $state(50);
  private readonly poller: VisiblePoller;
  private polls = 0;

  constructor(
    readonly slug: string,
    private readonly labelOf: (id: string) => string,
    private readonly call: AttemptsCall = (...a) => commands.attempts(...a),
    private readonly periodMs = 1000,
  ) {
    this.poller = new VisiblePoller(() => this.poll(), this.periodMs);
  }

  /** One poll: fetches the newest rows and updates the fresh marks and the event feed. */
  async poll(): Promise<void> {
    const out = await attempt(() => unwrap(this.call(this.slug, fetchLimit(this.window))));
    if (!out.ok) {
      this.error = out.failure;
      return;
    }
    this.error = null;
    const first = this.polls === 0;
    this.polls += 1;
    const before = new Set(this.rows.map(rowKey));
    const rows = out.data;
    this.fresh = first ? new Set() : new Set(rows.map(rowKey).filter((k) => !before.has(k)));
    this.rows = rows;
    this.loaded = true;
    this.mergeEvents(activityEvents(rows, this.labelOf), first);
  }

  private mergeEvents(found: ActivityEvent[], first: boolean): void {
    const known = new Set(this.events.map((e) => e.key));
    const added = found.filter((e) => !known.has(e.key));
    if (added.length === 0) return;
    this.events = [...added, ...this.events].sort((a, b) => b.at.localeCompare(a.at)).slice(0, MAX_EVENTS);
    if (!first) this.newEvents = new Set([...this.newEvents, ...added.map((e) => e.key)]);
  }

  /** Starts polling every second while the window is visible; returns the stop function. */
  start(): () => void {
    return this.poller.start();
  }

  stop(): void {
    this.poller.stop();
  }

  /** Changes how many turns the chart covers (fetches more rows when needed). */
  setWindow(turns: number): void {
    this.window = turns;
    void this.poll();
  }
}
