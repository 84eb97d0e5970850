import { expect, test } from './fixtures';
import { TOKEN, newProject, openIde, screenshot } from './helpers';

test('the page is cross-origin isolated', async ({ page }) => {
  const response = await openIde(page);
  expect(response?.headers()['cross-origin-opener-policy']).toBe('same-origin');
  expect(response?.headers()['cross-origin-embedder-policy']).toBe('credentialless');
  expect(await page.evaluate(() => window.crossOriginIsolated)).toBe(true);
});

test('the five panes are present', async ({ page }) => {
  await openIde(page);
  for (const id of ['message-list', 'chat-input', 'chat-send', 'file-tree', 'editor', 'terminal', 'preview']) {
    await expect(page.getByTestId(id)).toBeVisible();
  }
  await expect(page.getByTestId('preview-frame')).toBeAttached();
  expect(await page.getByTestId('preview-frame').evaluate((el) => el.tagName)).toBe('IFRAME');
});

test('sending a message adds it to the conversation', async ({ page }) => {
  await openIde(page);
  await page.getByTestId('chat-input').fill('hello there');
  await page.getByTestId('chat-send').click();
  await expect(page.getByTestId('message-user')).toHaveCount(1);
  await expect(page.getByTestId('message-user')).toContainText('hello there');
  await expect(page.getByTestId('chat-input')).toHaveValue('');
});

test('Monaco loads lazily and is editable', async ({ page }) => {
  await openIde(page);
  const editor = page.getByTestId('editor');
  await expect(editor.locator('.monaco-editor')).toBeVisible();
  await editor.locator('.monaco-editor .view-lines').click();
  await page.keyboard.press('Control+End');
  await page.keyboard.type('typed in Monaco');
  const value = await page.evaluate(() => (window as any).monaco.editor.getModels()[0].getValue());
  expect(value).toContain('# Welcome to Rivet');
  expect(value).toContain('typed in Monaco');
});

test("a JavaScript file is shown without Monaco's TypeScript service, which starts when the editor is focused", async ({ page }) => {
  const project = await newProject(page);
  const written = await page.request.put(`/api/v1/projects/${project}/files/broken.js`, {
    headers: { authorization: `Bearer ${TOKEN}` },
    data: 'const answer = ;\n',
  });
  expect(written.status()).toBe(204);
  const workers: string[] = [];
  page.context().on('request', (request) => {
    if (request.url().includes('/assets/ts.worker')) workers.push(request.url());
  });
  await openIde(page, `/p/${project}`);
  await page.locator('[data-testid="file-entry"][data-path="broken.js"]').click();
  const editor = page.getByTestId('editor');
  await expect(editor.locator('.view-lines')).toContainText('const answer');
  const marks = () =>
    page.evaluate(() => {
      const monaco = (window as any).monaco;
      return monaco.editor.getModelMarkers({ resource: monaco.Uri.file('/broken.js') }).length;
    });
  // Whether the service answers within 3 s (an idle one starts in about 1).
  const service = () =>
    page.evaluate(() => {
      const typescript = (window as any).monaco.languages.typescript;
      const started = typescript.getJavaScriptWorker().then((worker: () => Promise<unknown>) => worker()).then(() => 'started');
      return Promise.race([started, new Promise((held) => setTimeout(() => held('held'), 3000))]);
    });
  // Shown, but unchecked: no worker, no marks.
  expect(await service()).toBe('held');
  expect(await marks()).toBe(0);
  expect(workers).toEqual([]);
  // Focused, the service starts and marks the syntax error.
  await editor.locator('.monaco-editor .view-lines').click();
  await expect.poll(marks).toBeGreaterThan(0);
  expect(await service()).toBe('started');
  expect(workers).toHaveLength(1);
});

test('xterm.js renders in the terminal pane', async ({ page }) => {
  await openIde(page);
  const terminal = page.getByTestId('terminal');
  await expect(terminal.locator('.xterm')).toBeVisible();
  await expect(terminal.locator('.xterm-rows')).toContainText('Rivet terminal');
});

test('panes can be resized', async ({ page }) => {
  await openIde(page);
  const chat = page.locator('.chat-pane');
  const before = (await chat.boundingBox())!.width;
  const splitter = page.locator('.panes > .splitter');
  const box = (await splitter.boundingBox())!;
  await page.mouse.move(box.x + box.width / 2, box.y + 200);
  await page.mouse.down();
  await page.mouse.move(box.x + 120, box.y + 200, { steps: 5 });
  await page.mouse.up();
  const after = (await chat.boundingBox())!.width;
  expect(after).toBeGreaterThan(before + 100);
});

test('settings show the configuration without secrets', async ({ page }) => {
  await openIde(page);
  await page.getByTestId('settings-toggle').click();
  const settings = page.getByTestId('settings');
  await expect(settings).toBeVisible();
  await expect(settings).toContainText('Runtime');
  await expect(settings).toContainText('sandbox');
});

test('screenshot for the README', async ({ page }) => {
  await openIde(page);
  await expect(page.getByTestId('editor').locator('.monaco-editor')).toBeVisible();
  await expect(page.getByTestId('terminal').locator('.xterm')).toBeVisible();
  await screenshot(page, 'ide.png');
});

test('a shell tab runs a shell in the sandbox, and closing the tab ends it', async ({ page }) => {
  await openIde(page);
  /** Types `line` into `tab` until its output shows `expected`. */
  async function ask(tab: ReturnType<typeof page.getByTestId>, line: string, expected: string) {
    await tab.locator('.xterm').click();
    await expect(async () => {
      await page.keyboard.type(line);
      await page.keyboard.press('Enter');
      await expect(tab.locator('.xterm-rows')).toContainText(expected, { timeout: 5_000 });
    }).toPass({ timeout: 60_000 });
  }
  await page.getByTestId('terminal-new').click();
  const shell = page.getByTestId('terminal-shell');
  await expect(shell.locator('.xterm')).toBeVisible();
  await ask(shell, 'export MARK=kept; echo mark-$MARK', 'mark-kept');
  await page.getByRole('button', { name: 'Close shell' }).click();
  await expect(shell).toHaveCount(0);
  // The new tab is shell 1 again: the server started a new shell for it,
  // without the closed one's variable or output.
  await page.getByTestId('terminal-new').click();
  const again = page.getByTestId('terminal-shell');
  await ask(again, 'echo again-${MARK:-fresh}', 'again-fresh');
  await expect(again.locator('.xterm-rows')).not.toContainText('mark-kept');
});
