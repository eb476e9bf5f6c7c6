// The web console end to end (issue 43): a real `switchyard relay serve --console` on a real
// Postgres (scripts/with-postgres) with the mock provider, driven in headless system Chromium —
// no mocked API. Sign in with an admin token, add a user and read their token once, set a limit,
// send traffic with that token, see the usage and the limit bar move, cool a key with a scripted
// 429 and see its countdown, revoke the user, see the audit rows. Then the refusals (a user token
// cannot sign in, no CSRF header, an expired session, no console without --console), the canaries
// (no key or token but the one shown once in any response, cookie or storage the browser saw), a
// screenshot of every screen (docs/screenshots/console-*.png) and the cold page load.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page, type Response as PwResponse } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const target = process.env.CARGO_TARGET_DIR ?? join(repo, 'target');
const switchyard = join(target, 'debug/switchyard');
const mockBin = join(target, 'debug/mock-provider');
const KEY_1 = 'sk-ant-canary-console-first-3f9a1c';
const KEY_2 = 'sk-ant-canary-console-second-77b0de';
const shots = join(repo, 'docs/screenshots');

const children: ChildProcess[] = [];
let browser: Browser;
let work: string;
let env: NodeJS.ProcessEnv;
let relayUrl = '';
let rootToken = '';
let pgUrl = '';

function cli(args: string[], input?: string): { code: number; stdout: string; stderr: string } {
  const r = spawnSync(switchyard, ['--data-dir', join(work, 'admin'), ...args], { env, input, encoding: 'utf8' });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

/** Starts `cmd` and resolves with what follows "listening on " in its first lines. */
function announced(cmd: string, args: string[], extraEnv: NodeJS.ProcessEnv = {}): Promise<{ child: ChildProcess; url: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env: { ...env, ...extraEnv }, stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(child);
    let seen = '';
    const timer = setTimeout(() => reject(new Error(`${cmd} did not announce: ${seen}`)), 30_000);
    child.stdout?.on('data', (d: Buffer) => {
      seen += d.toString();
      const m = seen.match(/listening on (http\S+)/);
      if (m) {
        clearTimeout(timer);
        resolve({ child, url: m[1] });
      }
    });
    child.on('exit', (code) => reject(new Error(`${cmd} exited ${code}: ${seen}`)));
  });
}

function psql(sql: string): string {
  const bin = process.env.SWITCHYARD_TEST_PG_BIN ? join(process.env.SWITCHYARD_TEST_PG_BIN, 'psql') : 'psql';
  const r = spawnSync(bin, [pgUrl, '-tAc', sql], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`psql: ${r.stderr}`);
  return r.stdout.trim();
}

let sent = 0;

/** One messages call (each a new conversation, as a new task of an agent would be). */
async function message(token: string): Promise<number> {
  sent += 1;
  const r = await fetch(`${relayUrl}/c/team/v1/messages`, {
    method: 'POST',
    headers: { 'x-api-key': token, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'm1', max_tokens: 8, messages: [{ role: 'user', content: `task ${sent}` }] }),
  });
  const body = await r.text();
  if (r.status !== 200 && r.status !== 401) process.stdout.write(`message: ${r.status} ${r.headers.get('x-switchyard-reason')} ${body.slice(0, 200)}\n`);
  return r.status;
}

beforeAll(async () => {
  const server = process.env.SWITCHYARD_TEST_PG;
  if (!server) throw new Error('run under scripts/with-postgres (SWITCHYARD_TEST_PG)');
  work = mkdtempSync(join(tmpdir(), 'sy-console-'));
  const db = `sy_console_${process.pid}`;
  pgUrl = server;
  psql(`CREATE DATABASE ${db}`);
  pgUrl = server.replace(/\/postgres$/, `/${db}`);
  const keyFile = join(work, 'master.key');
  writeFileSync(keyFile, Array.from({ length: 32 }, (_, i) => ((i * 37 + 11) % 256).toString(16).padStart(2, '0')).join(''), { mode: 0o600 });
  env = { ...process.env, SWITCHYARD_STORE: pgUrl, SWITCHYARD_MASTER_KEY_FILE: keyFile, SWITCHYARD_VAULT: 'sealed' };
  delete env.SWITCHYARD_TEST_PG;
  // The first key serves three calls, then answers 429 (retry in 5 minutes), then serves again.
  const script = {
    keys: {
      [KEY_1]: { models: ['m1'], listing: 'ok', behaviour: { sequence: ['ok', 'ok', 'ok', { rate_limited: { retry_after_secs: 300 } }, 'ok'] } },
      [KEY_2]: { models: ['m1'] },
    },
  };
  writeFileSync(join(work, 'script.json'), JSON.stringify(script));
  const mock = await announced(mockBin, ['--no-record', '--script', join(work, 'script.json')]);
  const base = mock.url;
  const add = cli(['connection', 'add', 'team', '--protocol', 'anthropic', '--base-url', base, '--model', 'm1', '--secret-stdin'], KEY_1);
  expect(add.code, add.stderr).toBe(0);
  expect(cli(['profile', 'add', 'team', '--label', 'second', '--secret-stdin'], KEY_2).code).toBe(0);
  expect(cli(['verify', 'team']).code).toBe(0);
  expect(cli(['routing', 'activate', 'team', 'priority']).code).toBe(0);
  const root = cli(['--json', 'relay', 'users', 'add', 'root', '--role', 'admin']);
  rootToken = JSON.parse(root.stdout).token;
  expect(rootToken).toMatch(/^syu_/);
  const relay = await announced(switchyard, ['--data-dir', join(work, 'replica'), 'relay', 'serve', '--listen', '127.0.0.1:0', '--console']);
  relayUrl = relay.url;
  browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'] });
  mkdirSync(shots, { recursive: true });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  for (const c of children) c.kill('SIGTERM');
});

interface Seen {
  url: string;
  status: number;
  body: string;
}

async function consolePage(): Promise<{ page: Page; seen: Seen[]; errors: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  const page = await context.newPage();
  const seen: Seen[] = [];
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('response', async (r: PwResponse) => {
    const entry = { url: r.url(), status: r.status(), body: '' };
    seen.push(entry);
    entry.body = await r.text().catch(() => '');
  });
  return { page, seen, errors };
}

describe('the relay console', () => {
  it('is what a team admin needs, end to end', async () => {
    const { page, seen, errors } = await consolePage();
    // Cold load: transfer size and time until the sign-in form is interactive.
    const started = Date.now();
    await page.goto(`${relayUrl}/console/`);
    await page.getByTestId('sign-in-token').waitFor();
    const interactiveMs = Date.now() - started;
    const bytes = seen.reduce((n, s) => n + s.body.length, 0);
    writeFileSync(join(work, 'load.json'), JSON.stringify({ interactiveMs, bytes }));
    process.stdout.write(`console cold load: ${bytes} bytes in ${seen.length} responses, interactive after ${interactiveMs} ms\n`);
    await page.screenshot({ path: join(shots, 'console-sign-in.png') });

    await page.getByTestId('sign-in-token').fill(rootToken);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByTestId('signed-in-as').textContent()).toBe('root');
    await page.getByText('team').first().waitFor();
    await page.screenshot({ path: join(shots, 'console-connections.png') });

    // Users: add ana, her token shown once.
    await page.getByRole('button', { name: 'Users', exact: true }).click();
    const add = page.getByTestId('user-add');
    await add.locator('input[name=name]').fill('ana');
    await add.getByRole('button', { name: 'Add user' }).click();
    const anaToken = (await page.getByTestId('new-token-value').textContent())?.trim() ?? '';
    expect(anaToken).toMatch(/^syu_/);
    await page.screenshot({ path: join(shots, 'console-users.png') });
    await page.getByRole('button', { name: 'Hide the token' }).click();
    expect(await page.getByTestId('new-token').count(), 'shown once: gone when dismissed').toBe(0);

    // A user token cannot sign in.
    const asUser = await fetch(`${relayUrl}/console/api/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: anaToken }) });
    expect(asUser.status, 'a user token is refused').toBe(401);

    // Limits: ana may make 10 requests a minute.
    await page.getByRole('button', { name: 'Limits', exact: true }).click();
    const form = page.getByTestId('limit-set');
    await form.locator('input[name=scope]').fill('user:ana');
    await form.locator('input[name=amount]').fill('10');
    await form.getByRole('button', { name: 'Set limit' }).click();
    const bar = page.locator('[data-testid=limit-bar][data-id="user-ana-requests-minute"]');
    await expect.poll(() => bar.getAttribute('data-remaining')).toBe('10');

    // Traffic with ana's token: the bar and the usage move.
    for (let i = 0; i < 3; i++) expect(await message(anaToken)).toBe(200);
    await expect.poll(() => bar.getAttribute('data-remaining'), { timeout: 10_000 }).toBe('7');
    await page.screenshot({ path: join(shots, 'console-limits.png') });
    await page.getByRole('button', { name: 'Usage', exact: true }).click();
    await expect.poll(() => page.locator('[data-testid=usage-row][data-key=ana]').getAttribute('data-requests'), { timeout: 15_000 }).toBe('3');
    await page.screenshot({ path: join(shots, 'console-usage.png') });

    // The first key's scripted 429: the request moves to the second key, the first cools down.
    expect(await message(anaToken)).toBe(200);
    await page.getByRole('button', { name: 'Connections', exact: true }).click();
    await page.getByText('team').first().click();
    await page.getByTestId('countdown').first().waitFor({ timeout: 10_000 });
    await page.screenshot({ path: join(shots, 'console-connection.png') });

    await page.getByRole('button', { name: 'Attempts', exact: true }).click();
    await page.getByTestId('attempts-user').fill('ana');
    await page.getByRole('button', { name: 'Show' }).click();
    await expect.poll(() => page.locator('[data-testid=attempts] tbody tr').count(), { timeout: 10_000 }).toBe(5);
    await page.screenshot({ path: join(shots, 'console-attempts.png') });

    await page.getByRole('button', { name: 'Pools', exact: true }).click();
    await page.screenshot({ path: join(shots, 'console-pools.png') });

    // Revoke ana: her token is refused.
    await page.getByRole('button', { name: 'Users', exact: true }).click();
    await page.getByRole('button', { name: 'Revoke ana' }).click();
    await page.getByRole('button', { name: 'Revoke', exact: true }).click();
    await expect.poll(() => page.locator('[data-user=ana]').textContent()).toContain('revoked');
    await expect.poll(() => message(anaToken), { timeout: 5_000 }).toBe(401);

    // The audit names the admin.
    await page.getByRole('button', { name: 'Audit', exact: true }).click();
    for (const [action, subject] of [['user.add', 'ana'], ['limit.set', 'user-ana-requests-minute'], ['user.revoke', 'ana']]) {
      const row = page.locator(`[data-testid=audit-row][data-action="${action}"][data-subject="${subject}"]`).first();
      await row.waitFor();
      expect(await row.getAttribute('data-actor'), action).toBe('user:root');
    }
    await page.screenshot({ path: join(shots, 'console-audit.png') });
    // The one failed load expected: the session check before signing in (401).
    const failed = seen.filter((s) => s.status >= 400).map((s) => `${s.status} ${new URL(s.url).pathname}`);
    expect(failed, 'no call failed but the first session check').toEqual(['401 /console/api/session']);
    expect(errors.filter((e) => !e.includes('401 (Unauthorized)')), 'no page error (CSP included)').toEqual([]);

    // Canaries: the keys and the admin's token in nothing the browser saw; ana's token only in
    // the one response that showed it.
    const cookies = JSON.stringify(await page.context().cookies());
    const storage = await page.evaluate(() => JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }));
    const html = await page.content();
    for (const [what, text] of [['cookies', cookies], ['storage', storage], ['the page', html]] as const) {
      for (const canary of [KEY_1, KEY_2, rootToken, anaToken]) expect(text.includes(canary), `${canary.slice(0, 12)} in ${what}`).toBe(false);
    }
    const showing = seen.filter((s) => s.body.includes(anaToken));
    expect(showing.map((s) => new URL(s.url).pathname)).toEqual(['/console/api/call/relay_user_add']);
    for (const s of seen) {
      for (const canary of [KEY_1, KEY_2, rootToken]) expect(s.body.includes(canary), `${canary.slice(0, 12)} in ${s.url}`).toBe(false);
    }
    const cookie = (await page.context().cookies()).find((c) => c.name === 'sy_console');
    expect(cookie?.httpOnly && cookie.sameSite === 'Strict', 'HttpOnly, SameSite=Strict').toBe(true);
  });

  it('refuses a call without the CSRF header, an expired session, and is absent without --console', async () => {
    const signIn = await fetch(`${relayUrl}/console/api/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: rootToken }) });
    expect(signIn.status).toBe(200);
    const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0];
    const { csrf } = (await signIn.json()) as { csrf: string };
    const call = (headers: Record<string, string>) =>
      fetch(`${relayUrl}/console/api/call/relay_user_add`, { method: 'POST', headers: { cookie, 'content-type': 'application/json', ...headers }, body: JSON.stringify({ name: 'mallory', input: {} }) });
    expect((await call({})).status, 'no CSRF header').toBe(403);
    expect((await call({ 'x-switchyard-csrf': 'wrong' })).status, 'a wrong CSRF header').toBe(403);
    expect(cli(['relay', 'users', 'list']).stdout.includes('mallory'), 'nothing was changed').toBe(false);
    const list = await fetch(`${relayUrl}/console/api/call/relay_user_list`, { method: 'POST', headers: { cookie, 'x-switchyard-csrf': csrf } });
    expect(list.status, 'with it, served').toBe(200);
    // The session lives in the store: another replica on it honours it.
    const other = await announced(switchyard, ['--data-dir', join(work, 'replica-2'), 'relay', 'serve', '--listen', '127.0.0.1:0', '--console']);
    const there = await fetch(`${other.url}/console/api/call/relay_user_list`, { method: 'POST', headers: { cookie, 'x-switchyard-csrf': csrf } });
    expect(there.status, 'a second replica takes the session').toBe(200);
    psql("UPDATE console_sessions SET expires_at = 0");
    const expired = await fetch(`${relayUrl}/console/api/call/relay_user_list`, { method: 'POST', headers: { cookie, 'x-switchyard-csrf': csrf } });
    expect(expired.status, 'an expired session').toBe(401);
    const page = await fetch(`${relayUrl}/console/`);
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    const plain = await announced(switchyard, ['--data-dir', join(work, 'plain'), 'relay', 'serve', '--listen', '127.0.0.1:0']);
    expect((await fetch(`${plain.url}/console/`)).status, 'no console without --console').toBe(404);
    expect((await fetch(`${plain.url}/console/api/session`, { method: 'POST', body: '{}' })).status).toBe(404);
  });
});
