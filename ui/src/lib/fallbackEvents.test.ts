import { describe, expect, it } from 'vitest';
import { activityEvents, reasonText } from './activity';
import type { AttemptView } from './types';

function row(over: Partial<AttemptView>): AttemptView {
  return {
    at: '2026-01-01T00:00:01.000Z', turn: 't1', attempt: 3, profile: 'p_b1', reason: 'swrr', model: 'm1', status: 200,
    failure_kind: null, scope: null, ttfb_ms: 50, duration_ms: 90, input_tokens: 3, output_tokens: 7, session: null,
    conversation: null, moved: null, cache_read_tokens: null, cache_write_tokens: null, prompt_tokens: 3, connection: 'b', tags: {}, ...over,
  };
}

describe('fallback in the Activity view', () => {
  it('names the connection that served and why the first one could not', () => {
    const events = activityEvents([row({ reason: 'fallback:rate_limited' })], () => 'b-key');
    expect(events.map((e) => e.kind)).toEqual(['fallback']);
    expect(events[0].text).toContain('Fallback to b (b-key)');
    expect(events[0].text).toContain('could not serve');
    expect(reasonText('fallback:probe_in_flight')).toBe('fallback (probe in flight)');
  });

  it('says when the fallback attempt failed too', () => {
    const events = activityEvents([row({ reason: 'fallback:disabled', status: 500, failure_kind: 'server_error' })], () => 'k');
    expect(events[0].text).toContain('failed too');
  });
});
