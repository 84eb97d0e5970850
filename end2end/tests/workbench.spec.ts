import { expect, test, type Page } from '@playwright/test';
import fs from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { bin } from '../serve-env';
import net from 'node:net';
import os from 'node:os';
import { actions, editorText, newProject, screenshot, send } from './helpers';

const APP_READY = 180_000;

function preview(page: Page) {
  return page.frameLocator('[data-testid="preview-frame"]');
}

test('a todo app is built, runs in the preview, and takes an edit', async ({ page }) => {
  await newProject(page);
  const started = Date.now();
  await send(page, 'build a todo app');

  // The answer streams, with its artifact card.
  const answer = page.getByTestId('message-assistant');
  await expect(answer.getByTestId('artifact-card')).toContainText('React Todo App');
  // Files appear in the tree as they are written and open in the editor.
  const appFile = page.locator('[data-testid="file-entry"][data-path="src/App.jsx"]');
  await expect(appFile).toBeVisible();
  await appFile.click();
  await expect(page.locator('[data-testid="editor-tab"][data-path="src/App.jsx"]')).toBeVisible();
  await expect.poll(() => editorText(page, 'src/App.jsx')).toContain('export default function App');
  // The terminal shows the install.
  await expect(page.getByTestId('terminal-rivet')).toContainText('npm install', { timeout: APP_READY });

  // The preview shows the app, which works.
  const app = preview(page);
  await expect(app.getByRole('heading', { name: 'Todos' })).toBeVisible({ timeout: APP_READY });
  expect(Date.now() - started).toBeLessThan(APP_READY);
  await expect(actions(page, 'start')).toHaveAttribute('data-status', 'complete');
  await app.getByLabel('New todo').fill('buy milk');
  await app.getByRole('button', { name: 'Add' }).click();
  await expect(app.getByRole('listitem')).toContainText('buy milk');

  // A follow-up edit applies and the preview hot-reloads with it.
  await send(page, 'add a clear completed button');
  await expect(actions(page, 'edit')).toHaveAttribute('data-status', 'complete');
  await expect(app.getByRole('button', { name: 'Clear completed' })).toBeVisible();
  // The hot reload kept the page: the todo is still there.
  await expect(app.getByRole('listitem')).toContainText('buy milk');
  // The README's picture of a built app beside its conversation.
  await screenshot(page, 'todo-app.png');
});

test('a misspelt dependency fails the install with npm\'s 404 and an alert', async ({ page }) => {
  await newProject(page);
  await send(page, 'broken dep');
  // The broken answer's own install (the fix loop may answer after it).
  const install = page
    .getByTestId('message-assistant')
    .first()
    .locator('[data-testid="action"][data-kind="shell"]');
  await expect(install).toHaveAttribute('data-status', 'failed', { timeout: APP_READY });
  await expect(install.getByTestId('action-reason')).toContainText('404');
  await expect(page.getByTestId('alert').first()).toContainText('npm install');
});

test('Stop during npm install aborts it and everything after it', async ({ page }) => {
  await newProject(page);
  await send(page, 'build a todo app');
  const install = actions(page, 'shell');
  await expect(install).toHaveAttribute('data-status', 'running', { timeout: APP_READY });
  await page.getByTestId('chat-stop').click();
  await expect(install).toHaveAttribute('data-status', 'aborted');
  await expect(actions(page, 'start')).toHaveAttribute('data-status', 'aborted');
  await expect(page.getByTestId('chat-stop')).toBeDisabled();
});

test('closing the page during a run and reopening it shows the run finished', async ({ page, context }) => {
  const project = await newProject(page);
  await send(page, 'build a todo app');
  await expect(page.getByTestId('artifact-card')).toBeVisible();
  await page.close();

  const again = await context.newPage();
  await again.goto(`/p/${project}`);
  await expect(again.locator('body[data-hydrated="true"]')).toBeAttached();
  await expect(actions(again, 'start')).toHaveAttribute('data-status', 'complete', { timeout: APP_READY });
  await expect(preview(again).getByRole('heading', { name: 'Todos' })).toBeVisible({ timeout: APP_READY });
  await expect(again.getByTestId('message-user')).toContainText('build a todo app');
});

// Runs after the first test, so npm's cache (shared by the sandbox and the
// bare run below) is warm for both measurements.
test('prompt to preview, beside a bare npm install && npx vite', async ({ page, context }) => {
  const bare = await bareViteMs(context);

  await newProject(page);
  const started = Date.now();
  await send(page, 'build a todo app');
  await expect(preview(page).getByRole('heading', { name: 'Todos' })).toBeVisible({ timeout: APP_READY });
  const ide = Date.now() - started;

  const figures = { ide_ms: ide, bare_ms: bare, ratio: Number((ide / bare).toFixed(2)) };
  console.log(`prompt → preview: ${JSON.stringify(figures)}`);
  fs.mkdirSync(path.join(__dirname, '..', 'test-results'), { recursive: true });
  fs.writeFileSync(path.join(__dirname, '..', 'test-results', 'prompt-to-preview.json'), JSON.stringify(figures));
  expect(ide).toBeGreaterThan(0);
});

/** Writes the todo fixture's files with the parser, then times
 *  `npm install && npx vite` until the app's heading shows in a page. */
async function bareViteMs(context: import('@playwright/test').BrowserContext): Promise<number> {
  const root = path.resolve(__dirname, '..', '..');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rivet-bare-'));
  const transcript = fs.readFileSync(path.join(root, 'tests/fixtures/transcripts/todo-react.txt'));
  const parsed = await run(bin, ['parse'], root, transcript);
  for (const line of parsed.split('\n').filter(Boolean)) {
    const event = JSON.parse(line);
    if (event.event === 'action_close' && event.type === 'file') {
      fs.mkdirSync(path.dirname(path.join(dir, event.file_path)), { recursive: true });
      fs.writeFileSync(path.join(dir, event.file_path), event.content);
    }
  }
  const port = await freePort();
  const env = { ...process.env, npm_config_cache: path.join(process.env.RIVET_E2E_DATA_DIR!, 'cache', 'npm') };
  const started = Date.now();
  const server = spawn('sh', ['-c', `npm install && exec npx vite --host 127.0.0.1 --port ${port} --strictPort`], {
    cwd: dir,
    env,
    stdio: 'ignore',
    detached: true,
  });
  try {
    const page = await context.newPage();
    await expect
      .poll(async () => {
        try {
          await page.goto(`http://127.0.0.1:${port}/`, { timeout: 2_000 });
          return await page.getByRole('heading', { name: 'Todos' }).isVisible();
        } catch {
          return false;
        }
      }, { timeout: APP_READY, intervals: [100] })
      .toBe(true);
    const elapsed = Date.now() - started;
    await page.close();
    return elapsed;
  } finally {
    process.kill(-server.pid!, 'SIGTERM');
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function run(command: string, args: string[], cwd: string, input: Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`${command} exited ${code}`))));
    child.stdin.end(input);
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}
