// Presentation helpers: turn engine values into short words for the window.
import type { ConnectionView, ProfileView } from '../bindings';

/** The badge text of a connection's routing: `legacy`, `balanced`, `priority` or `suspended`. */
export function routingBadge(c: Pick<ConnectionView, 'routing_mode' | 'routing_state'>): string {
  if (c.routing_mode !== 'legacy' && c.routing_state === 'suspended') return 'suspended';
  return c.routing_mode;
}

/** One line describing a profile's credential for people, never its value. */
export function credentialText(p: Pick<ProfileView, 'credential'>): string {
  switch (p.credential) {
    case 'present':
      return 'in keychain';
    case 'missing':
      return 'missing';
    default:
      return 'keychain locked';
  }
}

/** Share of traffic a weight asks for among the enabled profiles, in whole percent. */
export function weightShare(profile: ProfileView, all: ProfileView[]): number {
  if (!profile.enabled) return 0;
  const total = all.filter((p) => p.enabled).reduce((sum, p) => sum + p.weight, 0);
  return total === 0 ? 0 : Math.round((profile.weight * 100) / total);
}
