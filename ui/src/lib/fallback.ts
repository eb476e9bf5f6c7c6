// Fallback chains as the window edits them: the engine's `FallbackStatus` (generated
// bindings), hops as `OTHER` / `OTHER=MODEL` text, and the edits of an ordered chain. Pure.
import type { FallbackHopView_Serialize, FallbackStatus_Serialize } from '../bindings';

/** One hop: the connection's slug and its model (`null`: the requested one, unchanged). */
export type FallbackHop = FallbackHopView_Serialize;
/** The engine's `FallbackStatus` (`routing status --json`'s `fallback`). */
export type FallbackStatus = FallbackStatus_Serialize;

/** `OTHER` or `OTHER=MODEL`, as `routing fallback` takes it. */
export function hopText(h: FallbackHop): string {
  return h.model ? `${h.slug}=${h.model}` : h.slug;
}

/** The chain's state in one word. */
export function chainState(s: FallbackStatus): 'none' | 'active' | 'suspended' | 'pending' | 'inactive' {
  if (s.chain.length === 0) return 'none';
  if (s.active) return 'active';
  if (s.activated) return 'suspended';
  return s.pending ? 'pending' : 'inactive';
}

/** Moves hop `i` by `by` places (-1 up, +1 down); out of range changes nothing. */
export function moveHop(chain: FallbackHop[], i: number, by: number): FallbackHop[] {
  const j = i + by;
  if (i < 0 || i >= chain.length || j < 0 || j >= chain.length) return chain;
  const out = chain.slice();
  [out[i], out[j]] = [out[j], out[i]];
  return out;
}

/** Appends `slug` (model-first) unless it is already in the chain. */
export function addHop(chain: FallbackHop[], slug: string): FallbackHop[] {
  return slug === '' || chain.some((h) => h.slug === slug) ? chain : [...chain, { slug, model: null }];
}
