import { fireEvent, render, screen } from '@testing-library/svelte';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { failingGates, health, readiness } from '../test/fixtures';
import Countdown from './Countdown.svelte';
import EvidenceCell from './EvidenceCell.svelte';
import GateChecklist from './GateChecklist.svelte';
import HealthCell from './HealthCell.svelte';

afterEach(() => vi.useRealTimers());

describe('Countdown', () => {
  it('ticks every second', async () => {
    vi.useFakeTimers();
    vi.setSystemTime(Date.parse('2026-01-01T00:00:00Z'));
    render(Countdown, { until: '2026-01-01T00:01:05Z' });
    expect(screen.getByTestId('countdown').textContent).toBe('1:05');
    await vi.advanceTimersByTimeAsync(3000);
    expect(screen.getByTestId('countdown').textContent).toBe('1:02');
  });

  it('calls onend once when the time is up', async () => {
    vi.useFakeTimers();
    vi.setSystemTime(Date.parse('2026-01-01T00:00:00Z'));
    const onend = vi.fn();
    render(Countdown, { until: '2026-01-01T00:00:02Z', onend });
    await vi.advanceTimersByTimeAsync(1000);
    expect(onend).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(3000);
    expect(onend).toHaveBeenCalledOnce();
    expect(screen.getByTestId('countdown').textContent).toBe('0:00');
  });
});

describe('HealthCell', () => {
  it('shows each open scope with a countdown or why, and resets one', async () => {
    const onreset = vi.fn();
    const until = new Date(Date.now() + 90_000).toISOString();
    render(HealthCell, {
      label: 'backup',
      onreset,
      health: [
        health({ model: 'gpt-b', state: 'open', kind: 'rate_limited', until }),
        health({ state: 'open', kind: 'auth_invalid' }),
        health({ model: 'gpt-a', state: 'closed' }),
      ],
    });
    const text = screen.getByTestId('health').textContent ?? '';
    expect(text).toContain('gpt-b: cooling down');
    expect(text).toContain('rate limited by the provider');
    expect(text).toContain('all models: open until re-verified');
    expect(text).not.toContain('gpt-a');
    await fireEvent.click(screen.getByRole('button', { name: 'Reset gpt-b circuit of backup' }));
    expect(onreset).toHaveBeenCalledWith('gpt-b');
  });

  it('says healthy when every circuit is closed', () => {
    render(HealthCell, { label: 'a', onreset: () => {}, health: [] });
    expect(screen.getByTestId('health').textContent).toContain('healthy');
  });
});

describe('EvidenceCell', () => {
  it('shows stale evidence with the reason and per-model sources', () => {
    render(EvidenceCell, {
      readiness: readiness({
        evidence: 'stale',
        evidence_detail: {
          verified_at: new Date().toISOString(),
          outcome: 'ok',
          stale_reason: 'the credential was replaced after this verification',
          models: [
            { model: 'gpt-a', source: 'listed', supported: true, failure_kind: null },
            { model: 'gpt-b', source: 'probed', supported: false, failure_kind: 'model_forbidden' },
          ],
        },
      }),
    });
    const text = screen.getByTestId('evidence').textContent ?? '';
    expect(text).toContain('stale');
    expect(text).toContain('credential was replaced');
    expect(text).toContain('gpt-a (listed)');
    expect(text).toContain('this key may not use the model');
  });

  it('says not verified when there is no evidence', () => {
    render(EvidenceCell, { readiness: readiness() });
    expect(screen.getByTestId('evidence').textContent).toContain('not verified');
  });
});

describe('GateChecklist', () => {
  it('lists per model who can serve it and why the others cannot', () => {
    render(GateChecklist, { gates: failingGates });
    const [a, b] = screen.getAllByTestId('gate-model');
    expect(a.textContent).toContain('can be served by primary');
    expect(a.textContent).toContain('backup: not verified yet');
    expect(b.textContent).toContain('no profile can serve it');
    expect(b.textContent).toContain('primary: the key cannot use this model');
    expect(b.textContent).toContain('backup: verification is stale');
    expect(screen.getByTestId('gate-shared').className).toContain('bad');
  });
});
