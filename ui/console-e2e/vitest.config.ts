// The web console's flow test against a real relay (issue 43): `npm run console-e2e`, under
// scripts/with-postgres, after `npm run build:console` and a debug build of the switchyard CLI
// (which embeds it) and the mock provider.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['console-e2e/**/*.e2e.ts'],
    environment: 'node',
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
