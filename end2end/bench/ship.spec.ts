import { expect, test } from '@playwright/test';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { newProject, send, TOKEN } from '../tests/helpers';

// How long the todo app takes to leave Rivet: its first push to an empty
// git remote (git's own smart-HTTP server, `git http-backend`, on loopback),
// a push after a change, and a publish (the Vite build in the sandbox and
// the copy of its output) done twice. The README's "Shipping" figures come
// from end2end/test-results/bench/ship.json.

const APP_READY = 240_000;

/** `git http-backend` as a CGI program behind a loopback HTTP server. */
async function gitServer(root: string) {
  spawnSync('git', ['init', '-q', '--bare', '-b', 'main', path.join(root, 'app.git')]);
  spawnSync('git', ['config', 'http.receivepack', 'true'], { cwd: path.join(root, 'app.git') });
  const server = http.createServer((request, response) => {
    const url = new URL(request.url!, 'http://git');
    const body: Buffer[] = [];
    request.on('data', (chunk) => body.push(chunk));
    request.on('end', () => {
      const input = Buffer.concat(body);
      const cgi = spawn('git', ['http-backend'], {
        env: {
          PATH: process.env.PATH,
          GIT_PROJECT_ROOT: root,
          GIT_HTTP_EXPORT_ALL: '1',
          GIT_CONFIG_NOSYSTEM: '1',
          GIT_CONFIG_GLOBAL: '/dev/null',
          REQUEST_METHOD: request.method,
          PATH_INFO: url.pathname,
          QUERY_STRING: url.search.slice(1),
          CONTENT_TYPE: request.headers['content-type'] ?? '',
          CONTENT_LENGTH: String(input.length),
          HTTP_CONTENT_ENCODING: String(request.headers['content-encoding'] ?? ''),
          GIT_PROTOCOL: String(request.headers['git-protocol'] ?? ''),
          REMOTE_USER: 'bench',
          REMOTE_ADDR: '127.0.0.1',
        },
      });
      const out: Buffer[] = [];
      cgi.stdout.on('data', (chunk) => out.push(chunk));
      cgi.on('close', () => {
        const all = Buffer.concat(out);
        let at = all.indexOf('\r\n\r\n');
        let gap = 4;
        if (at < 0) [at, gap] = [all.indexOf('\n\n'), 2];
        let status = 200;
        for (const line of all.subarray(0, at).toString().split(/\r?\n/)) {
          const [name, ...rest] = line.split(':');
          if (name.toLowerCase() === 'status') status = parseInt(rest.join(':').trim(), 10);
          else if (name) response.setHeader(name, rest.join(':').trim());
        }
        response.writeHead(status);
        response.end(all.subarray(at + gap));
      });
      cgi.stdin.end(input);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return { url: `http://127.0.0.1:${port}/app.git`, close: () => server.close() };
}

async function api(base: string, method: string, route: string, body?: object | string) {
  const started = Date.now();
  const response = await fetch(`${base}/api/v1${route}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : body ? JSON.stringify(body) : undefined,
  });
  const text = await response.text();
  expect(response.ok, text).toBe(true);
  const answer = text ? JSON.parse(text) : null;
  return { ms: Date.now() - started, answer };
}

test('ship', async ({ page, baseURL }) => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'rivet-bench-git-'));
  const remote = await gitServer(root);
  const project = await newProject(page);
  await send(page, 'build a todo app');
  const frame = page.frameLocator('[data-testid="preview-frame"]');
  await expect(frame.getByRole('heading', { name: 'Todos' })).toBeVisible({ timeout: APP_READY });

  const base = baseURL!;
  const figures: Record<string, number> = {};
  await api(base, 'PUT', `/projects/${project}/git/remote`, { url: remote.url });
  figures.first_push_ms = (await api(base, 'POST', `/projects/${project}/git/push`)).ms;
  await api(base, 'PUT', `/projects/${project}/files/src/note.txt`, 'a change\n');
  figures.push_after_a_change_ms = (await api(base, 'POST', `/projects/${project}/git/push`)).ms;
  figures.first_publish_ms = (await api(base, 'POST', `/projects/${project}/publish`, {})).ms;
  figures.second_publish_ms = (await api(base, 'POST', `/projects/${project}/publish`, {})).ms;
  remote.close();

  console.log(`ship: ${JSON.stringify(figures)}`);
  const out = path.join(__dirname, '..', 'test-results', 'bench');
  fs.mkdirSync(out, { recursive: true });
  fs.writeFileSync(path.join(out, 'ship.json'), JSON.stringify(figures, null, 2));
});
