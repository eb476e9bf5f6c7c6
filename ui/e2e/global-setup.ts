// Builds the UI and the fake engine bundle, and serves the build on 127.0.0.1 (a free port) for the flow tests.
import { createReadStream, existsSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';
import { build } from 'vite';

const ui = fileURLToPath(new URL('..', import.meta.url));
// A fresh production build of the current source, apart from ui/dist (which the desktop embeds).
const dist = join(ui, 'e2e/.build/dist');
const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript',
  '.css': 'text/css',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
  '.ico': 'image/x-icon',
};

declare module 'vitest' {
  export interface ProvidedContext {
    baseUrl: string;
    fakeScript: string;
  }
}

function serve(root: string): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname));
    let file = join(root, path);
    if (!file.startsWith(root) || !existsSync(file) || statSync(file).isDirectory()) file = join(root, 'index.html');
    res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream', 'cache-control': 'no-store' });
    createReadStream(file).pipe(res);
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const addr = server.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      resolve({ server, url: `http://127.0.0.1:${port}/` });
    }),
  );
}

export default async function setup(project: TestProject) {
  await build({ configFile: join(ui, 'e2e/vite.fake.config.ts'), root: ui });
  await build({ root: ui, logLevel: 'warn', build: { outDir: dist, emptyOutDir: true } });
  const { server, url } = await serve(dist);
  project.provide('baseUrl', url);
  project.provide('fakeScript', join(ui, 'e2e/.build/fake/fake-ipc.js'));
  return () => new Promise<void>((resolve) => server.close(() => resolve()));
}
