// Key switches inside a conversation (issue 14): the first attempt of a conversation on
// another key than its previous attempt re-sends its context to a cache that does not hold
// it. `prompt_tokens` is the whole prompt on one scale for both dialects (docs/interface.md,
// "Cache accounting"), so what went uncached is `prompt_tokens - cache_read_tokens` (Anthropic:
// input + cache write).
import type { AttemptView } from './types';
import { rowKey } from './activity';

export interface KeySwitch {
  /** The profile the conversation's previous attempt went to. */
  from: string;
  to: string;
  /** Tokens this attempt sent that no cache served; `null` when the provider gave no counts. */
  resent: number | null;
}

type Row = Pick<AttemptView, 'at' | 'turn' | 'attempt' | 'profile' | 'conversation' | 'prompt_tokens' | 'cache_read_tokens'>;

/** The attempts of `rows` (newest first) that switched their conversation's key, by `rowKey`. */
export function keySwitches(rows: Row[]): Map<string, KeySwitch> {
  const last = new Map<string, string>();
  const out = new Map<string, KeySwitch>();
  for (let i = rows.length - 1; i >= 0; i--) {
    const r = rows[i];
    if (!r.conversation) continue;
    const before = last.get(r.conversation);
    if (before !== undefined && before !== r.profile) {
      const resent = r.prompt_tokens === null ? null : Math.max(0, r.prompt_tokens - (r.cache_read_tokens ?? 0));
      out.set(rowKey(r), { from: before, to: r.profile, resent });
    }
    last.set(r.conversation, r.profile);
  }
  return out;
}

/** `12.3k uncached` / `850 uncached` / `uncached: unknown`. */
export function resentText(s: KeySwitch): string {
  if (s.resent === null) return 'uncached: unknown';
  const n = s.resent >= 1000 ? `${(s.resent / 1000).toFixed(1)}k` : String(s.resent);
  return `${n} uncached`;
}
