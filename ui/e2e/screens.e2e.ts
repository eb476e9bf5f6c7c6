// Saves a screenshot of each main screen, light and dark, when SWITCHYARD_UI_SHOTS=DIR is set
// (otherwise only checks that each screen renders without page errors).
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { close, openApp } from './harness';

afterAll(close);
const dir = process.env.SWITCHYARD_UI_SHOTS;

describe.each(['light', 'dark'] as const)('every screen renders (%s)', (scheme) => {
  it('connections, profiles, routing, activity and relay', async () => {
    const { page, errors } = await openApp('two-profiles', scheme);
    const shot = async (name: string) => {
      if (!dir) return;
      mkdirSync(dir, { recursive: true });
      await page.screenshot({ path: join(dir, `${name}-${scheme}.png`), fullPage: true });
    };
    await page.getByTestId('connection').waitFor();
    await shot('connections');
    await page.getByRole('button', { name: 'Open main' }).click();
    await page.getByRole('button', { name: 'Verify all' }).click();
    await page.getByText('2 of 2 checked').waitFor();
    await page.evaluate(() => window.__fake.coolDown('main', 'backup', 95, 'gpt-b'));
    await page.getByRole('button', { name: 'Reload' }).click();
    await page.getByTestId('countdown').waitFor();
    await shot('profiles');
    await page.getByRole('tab', { name: 'Routing' }).click();
    await shot('routing');
    await page.evaluate(() => window.__fake.relay.traffic('main', 12));
    await page.getByRole('tab', { name: 'Activity' }).click();
    await page.getByTestId('attempt').first().waitFor();
    await shot('activity');
    await page.getByRole('button', { name: /^Relay/ }).click();
    await page.getByTestId('relay-url').waitFor();
    await shot('relay');
    expect(errors).toEqual([]);
  });
});
