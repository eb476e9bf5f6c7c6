import { describe, expect, it } from 'vitest';
import { attempt, closeOnRetry, describeError, IpcFailure, toFailure, unwrap } from './errors';
import { failingGates } from '../test/fixtures';

describe('errors', () => {
  it('unwraps ok results and throws IPC errors', async () => {
    expect(await unwrap(Promise.resolve({ status: 'ok' as const, data: 7 }))).toBe(7);
    await expect(unwrap(Promise.resolve({ status: 'error' as const, error: { code: 'conflict' as const, message: 'm', gates: null } }))).rejects.toBeInstanceOf(IpcFailure);
  });

  it('keeps the code and the gate report of an IPC error', () => {
    const f = toFailure(new IpcFailure({ code: 'precondition', message: 'gates', gates: failingGates }));
    expect(f.code).toBe('precondition');
    expect(f.gates?.models).toHaveLength(2);
  });

  it('treats anything else as an unreachable backend', async () => {
    const out = await attempt(async () => {
      throw new Error('boom');
    });
    expect(out.ok ? null : out.failure).toMatchObject({ code: 'unreachable', message: 'boom' });
  });

  it('describes by code, not by message', () => {
    expect(describeError({ code: 'not_found', message: 'x' })).toBe('It no longer exists. x');
  });

  it('closes the dialog only when the retry succeeds', async () => {
    let closed = 0;
    let ok = false;
    const f = closeOnRetry({ code: 'conflict', title: '', message: '', gates: null, retry: async () => ({ ok, data: null }) }, () => (closed += 1));
    await f.retry?.();
    expect(closed).toBe(0);
    ok = true;
    await f.retry?.();
    expect(closed).toBe(1);
    const plain = { code: 'invalid' as const, title: '', message: '', gates: null };
    expect(closeOnRetry(plain, () => {})).toBe(plain);
  });
});
