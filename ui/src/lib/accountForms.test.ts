// The forms and dialogs of subscription accounts: adding a token or a sign-in, pasting a new
// token, and signing in again from a terminal.
import { fireEvent, render, screen, waitFor } from '@testing-library/svelte';
import { describe, expect, it, vi } from 'vitest';
import { profile } from '../test/fixtures';
import CredentialCell from './CredentialCell.svelte';
import ProfileForm from './ProfileForm.svelte';
import OauthSignIn from './OauthSignIn.svelte';
import SignInDialog from './SignInDialog.svelte';
import TokenForm from './TokenForm.svelte';

describe('ProfileForm kinds', () => {
  it('adds a token: a password field, the client of the protocol, the expiry day, cleared after submit', async () => {
    const onsubmit = vi.fn(async () => null);
    render(ProfileForm, { protocol: 'anthropic', onsubmit, oncancel: () => {} });
    await fireEvent.click(screen.getByLabelText(/Subscription token/));
    const token = screen.getByLabelText(/^Token/) as HTMLInputElement;
    expect(token.type).toBe('password');
    await fireEvent.input(screen.getByLabelText(/^Label/), { target: { value: 'max-1' } });
    await fireEvent.input(token, { target: { value: ' sk-ant-oat01-pasted \n' } });
    await fireEvent.input(screen.getByLabelText(/^Expires on/), { target: { value: '2027-01-05' } });
    await fireEvent.submit(screen.getByTestId('profile-form'));
    expect(onsubmit).toHaveBeenCalledWith({ label: 'max-1', weight: 1, priority: null }, 'sk-ant-oat01-pasted', {
      kind: 'token',
      client: 'claude-code',
      expires_at: new Date(2027, 0, 5, 23, 59, 59).toISOString(),
    });
    expect(token.value, 'the token is not kept in the form').toBe('');
  });

  it('adds a sign-in without any secret field, for the client of the protocol', async () => {
    const onsubmit = vi.fn(async () => null);
    render(ProfileForm, { protocol: 'openai', onsubmit, oncancel: () => {} });
    await fireEvent.click(screen.getByLabelText(/Codex sign-in/));
    expect(screen.queryByLabelText(/API key|^Token/), 'nothing to paste').toBeNull();
    expect(screen.getByTestId('external-note').textContent).toContain('never reads it');
    await fireEvent.input(screen.getByLabelText(/^Label/), { target: { value: 'plus-1' } });
    await fireEvent.submit(screen.getByTestId('profile-form'));
    expect(onsubmit).toHaveBeenCalledWith({ label: 'plus-1', weight: 1, priority: null }, null, { kind: 'external', client: 'codex', expires_at: null });
  });

  it('asks for the token instead of submitting an empty one', async () => {
    const onsubmit = vi.fn(async () => null);
    render(ProfileForm, { protocol: 'anthropic', onsubmit, oncancel: () => {} });
    await fireEvent.click(screen.getByLabelText(/Subscription token/));
    await fireEvent.submit(screen.getByTestId('profile-form'));
    expect(screen.getByRole('alert').textContent).toContain('Paste the token');
    expect(onsubmit).not.toHaveBeenCalled();
  });
});

describe('TokenForm', () => {
  it('never shows the old token, sends the new one with its expiry and clears it', async () => {
    const onsubmit = vi.fn(async () => null);
    render(TokenForm, { label: 'max-1', client: 'claude-code', onsubmit, oncancel: () => {} });
    const field = screen.getByLabelText(/^New token/) as HTMLInputElement;
    expect([field.type, field.value]).toEqual(['password', '']);
    expect(screen.getByTestId('token-form').textContent).toContain('only for requests from Claude Code');
    await fireEvent.input(field, { target: { value: 'sk-ant-oat01-new' } });
    await fireEvent.submit(screen.getByTestId('token-form'));
    expect(onsubmit).toHaveBeenCalledWith('sk-ant-oat01-new', null);
    expect(field.value).toBe('');
  });
});

describe('CredentialCell', () => {
  it('shows a token expiring with its reason and a highlighted Sign in again; a key has none', async () => {
    const onsignin = vi.fn();
    const token = profile({
      label: 'max-1', kind: 'token', client: 'claude-code',
      credential_health: { state: 'expiring', reason: 'the token expires within 7 days; paste a new one before then', expires_at: '2027-01-05T10:00:00.000Z' },
    });
    const { unmount } = render(CredentialCell, { profile: token, onsignin });
    const cell = screen.getByTestId('credential-health');
    expect(cell.dataset.state).toBe('expiring');
    expect(cell.textContent).toContain('expires 2027-01-05');
    expect(screen.getByTestId('credential-reason').textContent).toContain('within 7 days');
    const button = screen.getByRole('button', { name: 'Sign in again max-1' });
    expect(button.classList.contains('primary'), 'it needs the user').toBe(true);
    await fireEvent.click(button);
    expect(onsignin).toHaveBeenCalledWith(token);
    unmount();
    render(CredentialCell, { profile: profile({ label: 'k' }), onsignin });
    expect(screen.queryByRole('button'), 'an API key is replaced, not signed in').toBeNull();
    expect(screen.getByTestId('credential-health').textContent).toContain('in keychain');
  });
});

describe('SignInDialog', () => {
  const external = profile({
    label: 'max-2', kind: 'external', client: 'claude-code', config_dir: '/data/accounts/p_2',
    credential: 'missing', credential_health: { state: 'missing', reason: 'not signed in', expires_at: null },
  });

  it('shows the exact command with Copy, and Check again says whether the login is there', async () => {
    const writeText = vi.fn(async () => {});
    Object.defineProperty(navigator, 'clipboard', { value: { writeText }, configurable: true });
    const command = vi.fn(async () => ({ ok: true as const, data: 'switchyard profile login subs max-2' }));
    const failure = { code: 'precondition' as const, title: 'A precondition does not hold.', message: "'max-2' is still not signed in", gates: null };
    const oncheck = vi
      .fn()
      .mockResolvedValueOnce({ ok: false, failure })
      .mockResolvedValueOnce({ ok: true, data: { ...external, credential_health: { state: 'ok', reason: null, expires_at: null } } });
    render(SignInDialog, { profile: external, command, oncheck, onclose: () => {} });
    const shown = await screen.findByTestId('login-command');
    expect(shown.textContent).toBe('switchyard profile login subs max-2');
    expect(screen.getByTestId('sign-in').textContent).toContain('/data/accounts/p_2');
    await fireEvent.click(screen.getByRole('button', { name: 'Copy the sign-in command' }));
    expect(writeText).toHaveBeenCalledWith('switchyard profile login subs max-2');
    await fireEvent.click(screen.getByRole('button', { name: 'Check again' }));
    await waitFor(() => expect(screen.getByTestId('error').dataset.code).toBe('precondition'));
    await fireEvent.click(screen.getByRole('button', { name: 'Check again' }));
    await waitFor(() => expect(screen.getByTestId('signed-in').textContent).toContain('max-2 can serve requests again'));
    expect(screen.queryByTestId('error'), 'the refusal is gone once signed in').toBeNull();
    expect(oncheck).toHaveBeenCalledTimes(2);
  });
});

describe('OauthSignIn', () => {
  it('shows the address and the code, checks at the interval until approved, and never shows a token', async () => {
    vi.useFakeTimers();
    try {
      const owned = profile({ id: 'p_9', label: 'plus-1', kind: 'oauth', credential: 'missing' });
      const begin = vi.fn(async () => ({
        ok: true as const,
        data: { verification_url: 'https://auth.example/codex/device', user_code: 'WXYZ-9876', interval_secs: 2 },
      }));
      const pending = { code: 'precondition' as const, title: 'Not yet', message: 'not signed in yet', gates: null };
      const signed = profile({
        ...owned,
        credential: 'present',
        login: { account_id: 'acct-42', plan: 'plus', generation: 1, refreshed_at: null, last_refresh: 'succeeded', blocked_until: null },
      });
      const check = vi
        .fn()
        .mockResolvedValueOnce({ ok: false, failure: pending })
        .mockResolvedValueOnce({ ok: true, data: signed });
      render(OauthSignIn, { profile: owned, begin, check, onclose: () => {} });
      await vi.waitFor(() => expect(screen.getByTestId('oauth-code').textContent).toBe('WXYZ-9876'));
      expect(screen.getByTestId('oauth-url').textContent).toBe('https://auth.example/codex/device');
      expect(check, 'nothing is checked before the interval').not.toHaveBeenCalled();
      await vi.advanceTimersByTimeAsync(2000);
      expect(check, 'checked once at the interval; not approved yet').toHaveBeenCalledTimes(1);
      expect(screen.queryByTestId('oauth-signed-in')).toBeNull();
      await vi.advanceTimersByTimeAsync(2000);
      expect(check, 'checked again').toHaveBeenCalledTimes(2);
      await vi.waitFor(() => expect(screen.getByTestId('oauth-signed-in').textContent).toContain('acct-42'));
      await vi.advanceTimersByTimeAsync(10000);
      expect(check, 'no more checks once signed in').toHaveBeenCalledTimes(2);
    } finally {
      vi.useRealTimers();
    }
  });

  it('signs in with the browser: shows only the address to open, then the signed-in account', async () => {
    const owned = profile({ id: 'p_8', label: 'web-1', kind: 'oauth', credential: 'missing' });
    const begin = vi.fn(async () => ({
      ok: true as const,
      data: { verification_url: 'https://auth.example/codex/device', user_code: 'WXYZ-9876', interval_secs: 60 },
    }));
    const check = vi.fn();
    const url = 'https://auth.example/oauth/authorize?response_type=code&state=s1';
    const browserBegin = vi.fn(async () => ({ ok: true as const, data: { authorize_url: url } }));
    type Waited = { ok: true; data: typeof owned };
    let approve: (v: Waited) => void = () => {};
    const signed = profile({
      ...owned,
      credential: 'present',
      login: { account_id: 'acct-77', plan: 'pro', generation: 1, refreshed_at: null, last_refresh: 'succeeded', blocked_until: null },
    });
    const browserWait = vi.fn(() => new Promise<Waited>((resolve) => (approve = resolve)));
    render(OauthSignIn, { profile: owned, begin, check, browserBegin, browserWait, onclose: () => {} });
    expect(screen.queryByTestId('oauth-browser-url'), 'nothing to open before the button').toBeNull();
    await fireEvent.click(screen.getByRole('button', { name: 'Sign in with the browser' }));
    await waitFor(() => expect(screen.getByTestId('oauth-browser-url').textContent).toBe(url));
    expect(browserBegin).toHaveBeenCalledTimes(1);
    expect(browserWait, 'waits for the browser to come back').toHaveBeenCalledTimes(1);
    expect(screen.queryByTestId('oauth-signed-in'), 'not signed in before the callback').toBeNull();
    approve({ ok: true, data: signed });
    await waitFor(() => expect(screen.getByTestId('oauth-signed-in').textContent).toContain('acct-77'));
    expect(screen.queryByRole('button', { name: 'Sign in with the browser' }), 'no second sign-in offered').toBeNull();
  });

  it('shows why a browser sign-in failed (the port is taken)', async () => {
    const owned = profile({ id: 'p_7', label: 'web-2', kind: 'oauth', credential: 'missing' });
    const begin = vi.fn(async () => ({
      ok: true as const,
      data: { verification_url: 'https://auth.example/codex/device', user_code: 'WXYZ-9876', interval_secs: 60 },
    }));
    const taken = { code: 'precondition' as const, title: 'Port taken', message: 'the sign-in callback port is taken', gates: null };
    const browserBegin = vi.fn(async () => ({ ok: false as const, failure: taken }));
    const browserWait = vi.fn();
    render(OauthSignIn, { profile: owned, begin, check: vi.fn(), browserBegin, browserWait, onclose: () => {} });
    await fireEvent.click(screen.getByRole('button', { name: 'Sign in with the browser' }));
    await waitFor(() => expect(screen.getByTestId('error').dataset.code).toBe('precondition'));
    expect(browserWait, 'nothing to wait for').not.toHaveBeenCalled();
  });

  it('is offered as a kind on OpenAI connections only, with no secret field', async () => {
    const onsubmit = vi.fn(async () => null);
    const { unmount } = render(ProfileForm, { protocol: 'anthropic', onsubmit, oncancel: () => {} });
    expect(screen.queryByLabelText(/ChatGPT login/), 'no owned login for Claude').toBeNull();
    unmount();
    render(ProfileForm, { protocol: 'openai', onsubmit, oncancel: () => {} });
    await fireEvent.click(screen.getByLabelText(/ChatGPT login/));
    expect(screen.queryByLabelText(/API key|^Token/), 'nothing to paste').toBeNull();
    await fireEvent.input(screen.getByLabelText(/^Label/), { target: { value: 'plus-1' } });
    await fireEvent.submit(screen.getByTestId('profile-form'));
    expect(onsubmit).toHaveBeenCalledWith({ label: 'plus-1', weight: 1, priority: null }, null, { kind: 'oauth', client: null, expires_at: null });
  });
});
