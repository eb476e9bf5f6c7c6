// Each profile's share of the conversations and of the prompt tokens, as the engine computes
// them over the ledger (`routing status` `traffic`), shaped like the turn shares for the share
// chart; and the prompt-cache hit ratio text (`cache`).
import type { Share, ShareReport } from './activity';
import type { ProfileReadiness } from './types';

export type ShareBasis = 'turns' | 'conversations' | 'tokens';

/** The shares of `profiles` by conversations or by prompt tokens against their weights. */
export function trafficShares(profiles: ProfileReadiness[], by: 'conversations' | 'tokens'): ShareReport {
  const totalWeight = profiles.filter((p) => p.enabled).reduce((s, p) => s + p.weight, 0);
  const shares: Share[] = profiles.map((p) => ({
    id: p.id,
    label: p.label,
    weight: p.weight,
    // The engine's numbers arrive as JSON numbers (`null` only for a non-finite float).
    turns: (by === 'conversations' ? p.traffic.conversations : p.traffic.prompt_tokens) ?? 0,
    share: (by === 'conversations' ? p.traffic.conversation_share : p.traffic.token_share) ?? 0,
    expected: p.enabled && totalWeight > 0 ? p.weight / totalWeight : 0,
  }));
  const turns = shares.reduce((s, x) => s + x.turns, 0);
  return { turns, shares };
}

/** `cache 95.2 %`, or `cache —` when nothing was counted. */
export function hitRatioText(cache: ProfileReadiness['cache'] | undefined): string {
  if (!cache || cache.hit_ratio === null) return 'cache —';
  return `cache ${(cache.hit_ratio * 100).toFixed(1)} %`;
}
