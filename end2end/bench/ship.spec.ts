import { expect, test } from '@playwright/test';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gitServer } from '../tests/git-server';
import { newProject, send, TOKEN } from '../tests/helpers';

// How long the todo app takes to leave Rivet: its first push to an empty
// git remote (git's own smart-HTTP server, `git http-backend`, on loopback),
// a push after a change, and a publish (the Vite build in the sandbox and
// the copy of its output) done twice. The README's "Shipping" figures come
// from end2end/test-results/bench/ship.json.

const APP_READY = 240_000;

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
