// Flow tests: the built UI (ui/dist) in headless system Chromium (playwright-core) with the
// fake engine behind mocked IPC. Run with `npm run e2e` (builds first).
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['e2e/**/*.e2e.ts'],
    environment: 'node',
    globalSetup: ['e2e/global-setup.ts'],
    fileParallelism: false,
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
