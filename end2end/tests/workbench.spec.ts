import fs from 'node:fs';
import path from 'node:path';
import { expect, test, type Page } from './fixtures';
import { TOKEN, actions, editorText, newProject, openIde, screenshot, send } from './helpers';

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


test('a project larger than one listing says its file tree shows part of it', async ({ page }) => {
  // Made through the API, so nothing has listed it yet.
  const created = await page.request.post('/api/v1/projects', {
    headers: { authorization: `Bearer ${TOKEN}` },
    data: { name: 'many files' },
  });
  expect(created.status()).toBe(201);
  const { id } = await created.json();
  const many = path.join(process.env.RIVET_E2E_DATA_DIR!, 'projects', id, 'workspace', 'many');
  fs.mkdirSync(many, { recursive: true });
  for (let i = 0; i < 10_050; i++) fs.writeFileSync(path.join(many, `${i}.txt`), 'x');
  await openIde(page, `/p/${id}`);
  await expect(page.getByTestId('files-cut')).toContainText('more files and folders than one listing holds');
  // What one listing holds is there, in a folder too large to draw open.
  await expect(page.getByTestId('file-tree').getByRole('button', { name: '▸ many' })).toBeVisible();
});

test('a folder closed in the tree stays closed when files change', async ({ page }) => {
  const id = await newProject(page);
  const put = (file: string) =>
    page.request.put(`/api/v1/projects/${id}/files/${file}`, {
      headers: { authorization: `Bearer ${TOKEN}` },
      data: 'x',
    });
  expect((await put('src/a.txt')).status()).toBe(204);
  const inside = page.locator('[data-testid="file-entry"][data-path="src/a.txt"]');
  await expect(inside).toBeVisible();
  await page.getByTestId('file-tree').getByRole('button', { name: '▾ src' }).click();
  await expect(inside).toBeHidden();
  // A new file draws the tree again; the folder stays as the person left it.
  expect((await put('b.txt')).status()).toBe(204);
  await expect(page.locator('[data-testid="file-entry"][data-path="b.txt"]')).toBeVisible();
  await expect(inside).toBeHidden();
});

test('a saved file leaves the file tree as it is drawn', async ({ page }) => {
  const id = await newProject(page);
  const put = (file: string, text: string) =>
    page.request.put(`/api/v1/projects/${id}/files/${file}`, {
      headers: { authorization: `Bearer ${TOKEN}` },
      data: text,
    });
  expect((await put('a.txt', 'first')).status()).toBe(204);
  expect((await put('src/b.txt', 'b')).status()).toBe(204);
  const row = page.locator('[data-testid="file-entry"][data-path="src/b.txt"]');
  await expect(row).toBeVisible();
  await page.locator('[data-testid="file-entry"][data-path="a.txt"]').click();
  await expect.poll(() => editorText(page, 'a.txt')).toBe('first');
  // Mark the row's element: a tree drawn again would replace it.
  await row.evaluate((el) => ((el as any).keptFromBefore = true));
  expect((await put('a.txt', 'second')).status()).toBe(204);
  // The open tab reloads once the change has arrived.
  await expect.poll(() => editorText(page, 'a.txt')).toBe('second');
  expect(await row.evaluate((el) => (el as any).keptFromBefore === true)).toBe(true);
});
