import { expect, test, type Page } from './fixtures';
import { actions, newProject, openIde, send, webcontainerProject } from './helpers';

// The todo scenario with the answer parsed and run in the browser, on a
// WebContainer project. Which WebContainer the page gets depends on what
// the test server serves at /vendor/webcontainer/: the double in
// end2end/webcontainer-double/ (RIVET_RUNTIME_WEBCONTAINER_DIR pointing
// there; commands run in the project's server sandbox, so npm and Vite
// really run) or the real @webcontainer/api, which boots StackBlitz's
// runtime and needs its hosts.

const APP_READY = 180_000;
const DOUBLE = 'rivet-webcontainer-double';

async function servedPackage(page: Page): Promise<string> {
  return page.evaluate(async () => {
    const response = await fetch('/vendor/webcontainer/index.js');
    return response.ok ? response.text() : '';
  });
}

async function stackblitzReachable(): Promise<string | null> {
  try {
    const response = await fetch('https://stackblitz.com/', { signal: AbortSignal.timeout(5_000) });
    return response.ok || response.status < 500 ? null : `stackblitz.com answered ${response.status}`;
  } catch (error) {
    return `stackblitz.com is unreachable from here (${error})`;
  }
}

async function todoScenario(page: Page) {
  const project = await webcontainerProject(page);
  await send(page, 'build a todo app');
  const answer = page.getByTestId('message-assistant');
  await expect(answer.getByTestId('artifact-card')).toContainText('React Todo App');
  await expect(page.locator('[data-testid="file-entry"][data-path="src/App.jsx"]')).toBeVisible();
  await expect(page.getByTestId('terminal-rivet')).toContainText('npm install', { timeout: APP_READY });
  const app = page.frameLocator('[data-testid="preview-frame"]');
  await expect(app.getByRole('heading', { name: 'Todos' })).toBeVisible({ timeout: APP_READY });
  await expect(actions(page, 'start')).toHaveAttribute('data-status', 'complete');
  await expect(page.getByTestId('runtime-error')).toHaveCount(0);

  // The server's record is complete: the files the browser wrote are there.
  const written = await page.evaluate(async (p) => {
    const response = await fetch(`/api/v1/projects/${p}/files/src/App.jsx`);
    return response.ok ? response.text() : '';
  }, project);
  expect(written).toContain('export default function App');

  // An edit hot-reloads.
  await app.getByLabel('New todo').fill('buy milk');
  await app.getByRole('button', { name: 'Add' }).click();
  await send(page, 'add a clear completed button');
  await expect(actions(page, 'edit')).toHaveAttribute('data-status', 'complete');
  await expect(app.getByRole('button', { name: 'Clear completed' })).toBeVisible({ timeout: APP_READY });
  await expect(app.getByRole('listitem')).toContainText('buy milk');
}

test('offline: the browser parses and runs the todo answer on the WebContainer double', async ({ page }) => {
  await newProject(page);
  const served = await servedPackage(page);
  const reason = 'the test server serves the real @webcontainer/api, not the double (set RIVET_RUNTIME_WEBCONTAINER_DIR=end2end/webcontainer-double)';
  if (!served.includes(DOUBLE)) console.log(`skipped: ${reason}`);
  test.skip(!served.includes(DOUBLE), reason);
  test.setTimeout(2 * APP_READY + 60_000);
  await todoScenario(page);
});

test('offline: a failed install in the browser is fixed by the automatic attempt, also run in the browser', async ({ page }) => {
  await newProject(page);
  const served = await servedPackage(page);
  const reason = 'the test server serves the real @webcontainer/api, not the double (set RIVET_RUNTIME_WEBCONTAINER_DIR=end2end/webcontainer-double)';
  if (!served.includes(DOUBLE)) console.log(`skipped: ${reason}`);
  test.skip(!served.includes(DOUBLE), reason);
  test.setTimeout(2 * APP_READY);
  await webcontainerProject(page);
  await send(page, 'broken dep');
  // The browser runs the misspelt install, which fails, and reports it.
  const broken = page.getByTestId('message-assistant').first();
  await expect(broken.locator('[data-testid="action"][data-kind="shell"]')).toHaveAttribute('data-status', 'failed', {
    timeout: APP_READY,
  });
  // The server's fix loop answers the reported failure; the browser runs
  // the fix, and the app comes up.
  await expect(page.getByTestId('message-automatic')).toHaveCount(1, { timeout: APP_READY });
  await expect(page.getByTestId('message-automatic')).toContainText('attempt 1 of 3');
  const fix = page.getByTestId('message-assistant').last();
  await expect(fix.locator('[data-testid="action"][data-kind="start"]')).toHaveAttribute('data-status', 'complete', {
    timeout: APP_READY,
  });
  const app = page.frameLocator('[data-testid="preview-frame"]');
  await expect(app.getByRole('heading', { name: 'Todos' })).toBeVisible({ timeout: APP_READY });
  await expect(page.getByTestId('runtime-status')).toHaveAttribute('data-runtime', 'webcontainer');
});

/** Skips the test unless the test server serves the double. */
async function needsDouble(page: Page) {
  await newProject(page);
  const served = await servedPackage(page);
  const reason = 'the test server serves the real @webcontainer/api, not the double (set RIVET_RUNTIME_WEBCONTAINER_DIR=end2end/webcontainer-double)';
  if (!served.includes(DOUBLE)) console.log(`skipped: ${reason}`);
  test.skip(!served.includes(DOUBLE), reason);
}

/** What the double recorded (see end2end/webcontainer-double/index.js). */
async function doubleRecord(page: Page): Promise<{ spawned: { command: string; args: string[] }[]; previewMessages: { type: string }[] }> {
  return page.evaluate(() => (globalThis as any).rivetWebContainerDouble ?? { spawned: [], previewMessages: [] });
}

test('offline: a shell tab of a WebContainer project runs jsh in the WebContainer', async ({ page }) => {
  await needsDouble(page);
  test.setTimeout(2 * APP_READY);
  // Terminal WebSockets the page opens: a sandbox shell would be terminal 1.
  const sockets: string[] = [];
  page.on('websocket', (socket) => sockets.push(socket.url()));
  await webcontainerProject(page);
  await page.getByTestId('terminal-new').click();
  const shell = page.getByTestId('terminal-shell');
  await expect(shell.locator('.xterm')).toBeVisible();
  // The double saw `jsh` spawned with no arguments: an interactive shell.
  await expect
    .poll(async () => (await doubleRecord(page)).spawned.some((s) => s.command === 'jsh' && s.args.length === 0), {
      timeout: APP_READY,
    })
    .toBe(true);
  // The double's jsh is bash in the project's sandbox, which `exec`s it from
  // the terminal's own shell: the line is typed again until it answers, in
  // case keys arrive while one shell replaces the other.
  await shell.locator('.xterm').click();
  await expect(async () => {
    await page.keyboard.type('echo shell-$((6*7))');
    await page.keyboard.press('Enter');
    await expect(shell.locator('.xterm-rows')).toContainText('shell-42', { timeout: 5_000 });
  }).toPass({ timeout: APP_READY });
  expect(sockets.filter((url) => /\/terminals\/1\/ws/.test(url))).toEqual([]);
});

test('offline: a page error of a WebContainer preview is reported once, through the WebContainer', async ({ page }) => {
  await needsDouble(page);
  test.setTimeout(2 * APP_READY);
  await webcontainerProject(page);
  await send(page, 'page throws');
  const frame = page.frameLocator('[data-testid="preview-frame"]');
  await expect(frame.locator('#list')).toBeAttached({ timeout: APP_READY });
  const results = page.locator('[data-testid="build-result"][data-stage="PageError"]');
  await expect(results.first()).toBeVisible({ timeout: APP_READY });
  await expect(results).toHaveCount(1);
  const result = results.first();
  await expect(result).toContainText('the page threw an error');
  await expect(result).toContainText('app.js');
  await result.locator('summary').click();
  await expect(result).toContainText("reading 'map'");
  // It came as the WebContainer's `preview-message`, not from the window's
  // message (the IDE page does not forward those for this project).
  const messages = (await doubleRecord(page)).previewMessages.map((m) => m.type);
  expect(messages).toContain('PREVIEW_UNCAUGHT_EXCEPTION');
  // The fix loop answers it, and the browser runs the fix.
  await expect(page.getByTestId('message-assistant').last()).toContainText('The list renders now', {
    timeout: APP_READY,
  });
  await page.getByTestId('preview-reload').click();
  await expect(frame.locator('#list li')).toHaveCount(3, { timeout: APP_READY });
  await expect(results).toHaveCount(1);
});

test('online: the todo app builds in a real WebContainer', async ({ page }) => {
  await newProject(page);
  const served = await servedPackage(page);
  const unreachable = await stackblitzReachable();
  const reason = served.includes(DOUBLE)
    ? 'the test server serves the WebContainer double, not @webcontainer/api'
    : !served
      ? '@webcontainer/api is not served at /vendor/webcontainer/ (npm ci not run?)'
      : unreachable;
  if (reason) console.log(`skipped: ${reason}`);
  test.skip(reason !== null, reason ?? '');
  test.setTimeout(2 * APP_READY + 60_000);
  await todoScenario(page);
});

test("offline: a WebContainer project's processes get its app secrets, masked in what they print", async ({ page }) => {
  await needsDouble(page);
  test.setTimeout(2 * APP_READY);
  await webcontainerProject(page);
  await expect(page.locator('body[data-hydrated="true"]')).toBeAttached();
  await page.getByTestId('settings-toggle').click();
  await page.getByTestId('settings-secret-name').fill('STRIPE_KEY');
  await page.getByTestId('settings-secret-value').fill('sk_wc_hidden_value');
  await page.getByTestId('settings-secret-add').click();
  await expect(page.getByTestId('settings-secret')).toContainText('STRIPE_KEY');
  await page.getByTestId('settings-toggle').click();

  // tests/fixtures/transcripts/secret-check.txt prints the value reversed
  // (so it shows the process had it) and as it is (so it must be masked).
  await send(page, 'check the app secret');
  const terminal = page.getByTestId('terminal-rivet');
  await expect(terminal).toContainText('the key is [STRIPE_KEY]', { timeout: APP_READY });
  await expect(terminal).toContainText('reversed: eulav_neddih_cw_ks');
  await expect(terminal).not.toContainText('sk_wc_hidden_value');
  // The browser gave the value to the WebContainer's spawn.
  const lines = (await doubleRecord(page)).spawned.map((s) => s.args.join(' '));
  expect(lines.some((line) => line.includes("export STRIPE_KEY='sk_wc_hidden_value'"))).toBe(true);
});

test('offline: a supabase action of a browser project runs on the server, and the chat says where', async ({ page }) => {
  await needsDouble(page);
  test.setTimeout(APP_READY);
  const project = await webcontainerProject(page);
  await send(page, 'note the todos in the database');
  const supabase = actions(page, 'supabase');
  await expect(supabase).toHaveCount(2);
  for (const action of await supabase.all()) {
    await expect(action).toHaveAttribute('data-status', 'complete', { timeout: APP_READY });
  }
  await expect(supabase.nth(1).getByTestId('query-result')).toContainText('bread');
  await expect(page.getByTestId('alert')).toContainText('needs the sandbox runtime');
  await expect(page.getByTestId('alert')).toHaveCount(1);
  // The server's database holds the table the browser's runner asked for.
  const tables = await page.evaluate(async (p) => (await fetch(`/api/v1/projects/${p}/database/tables`)).json(), project);
  expect(tables).toEqual([
    { name: 'todos', rows: 2, columns: [{ name: 'id', type: 'integer' }, { name: 'title', type: 'text' }] },
  ]);
});

// Publish on a WebContainer project: the build runs in the tab's
// WebContainer (its output in the Rivet tab), the tab sends the built files,
// and a stranger's browser uses the app at its own address.
test('offline: a WebContainer project is built in its tab and published for a stranger', async ({ page, browser }) => {
  await needsDouble(page);
  test.setTimeout(3 * APP_READY);
  await webcontainerProject(page);
  await send(page, 'build a todo app');
  const app = page.frameLocator('[data-testid="preview-frame"]');
  await expect(app.getByRole('heading', { name: 'Todos' })).toBeVisible({ timeout: APP_READY });

  await page.getByTestId('settings-toggle').click();
  await page.getByTestId('publish-button').click();
  const row = page.locator('[data-testid="publish-version"][data-version="1"]');
  await expect(row).toContainText('live', { timeout: APP_READY });
  const builds = (await doubleRecord(page)).spawned.filter((s) => s.args.join(' ').includes('npm run build'));
  expect(builds).toHaveLength(1);
  // Its output is in the Rivet tab.
  await expect(page.getByTestId('terminal-rivet')).toContainText('built in');

  const url = (await page.getByTestId('publish-url').getAttribute('href'))!;
  const strangers = await browser.newContext();
  const stranger = await strangers.newPage();
  await stranger.goto(url);
  await expect(stranger.getByRole('heading', { name: 'Todos' })).toBeVisible();
  await stranger.getByLabel('New todo').fill('buy milk');
  await stranger.getByRole('button', { name: 'Add' }).click();
  await expect(stranger.getByRole('listitem')).toContainText('buy milk');
  await strangers.close();
});
