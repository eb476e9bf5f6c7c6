import { defineConfig } from 'vite';
import { svelte } from '@sveltejs/vite-plugin-svelte';
import { fileURLToPath } from 'node:url';

const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));

// Two builds of one UI (issue 43). The desktop's (default): Tauri expects a fixed port in dev and
// relative asset paths in the embedded build. The console's (`vite build --mode console`, into
// dist-console, which the relay embeds): served under /console/, with the Tauri IPC modules
// replaced by the HTTP transport (src/transport/http-*.ts) — the bindings and every screen are
// the same code.
export default defineConfig(({ mode }) => {
  const console = mode === 'console';
  return {
    plugins: [svelte()],
    clearScreen: false,
    base: console ? '/console/' : '/',
    server: { port: 5173, strictPort: true },
    build: console
      ? { target: 'es2020', outDir: 'dist-console', emptyOutDir: true, assetsInlineLimit: 0 }
      : { target: 'safari15', outDir: 'dist', emptyOutDir: true },
    test: {
      environment: 'jsdom',
      include: ['src/**/*.test.ts'],
      setupFiles: ['@testing-library/svelte/vitest'],
    },
    resolve: {
      ...(process.env.VITEST ? { conditions: ['browser'] } : {}),
      ...(console
        ? {
            alias: {
              '@tauri-apps/api/core': here('./src/transport/http-core.ts'),
              '@tauri-apps/api/event': here('./src/transport/http-event.ts'),
              '@tauri-apps/plugin-dialog': here('./src/transport/http-dialog.ts'),
            },
          }
        : {}),
    },
  };
});
