import { expect, test, type Page } from '@playwright/test';
import { TOKEN, actions, newProject, openIde, send } from './helpers';

const APP_READY = 180_000;

function preview(page: Page) {
  return page.frameLocator('[data-testid="preview-frame"]');
}

/** The projects the server knows, through the HTTP API. */
async function projects(page: Page): Promise<{ id: string; name: string }[]> {
  const response = await page.request.get('/api/v1/projects', {
    headers: { authorization: `Bearer ${TOKEN}` },
  });
  expect(response.ok()).toBe(true);
  return response.json();
}

test('restore to the first answer brings its version back to the preview, and a fork keeps it', async ({ page }) => {
  const original = await newProject(page);
  await send(page, 'build a todo app');
  const app = preview(page);
  await expect(app.getByRole('heading', { name: 'Todos' })).toBeVisible({ timeout: APP_READY });
  await expect(actions(page, 'start')).toHaveAttribute('data-status', 'complete');

  // A second answer edits the app.
  await send(page, 'add a clear completed button');
  await expect(actions(page, 'edit')).toHaveAttribute('data-status', 'complete');
  await expect(app.getByRole('button', { name: 'Clear completed' })).toBeVisible();

  // Restore to the first answer: the preview shows the first version, the
  // later messages stay, marked undone.
  const first = page.getByTestId('message-assistant').first();
  await first.getByTestId('restore-to-here').click();
  await expect(app.getByRole('button', { name: 'Clear completed' })).toHaveCount(0, { timeout: 30_000 });
  await expect(app.getByRole('heading', { name: 'Todos' })).toBeVisible();
  const later = page.getByTestId('message-assistant').last();
  await expect(later).toHaveClass(/undone/);
  await expect(page.getByTestId('message-user').last()).toHaveClass(/undone/);

  // Redo puts the edit back; restoring again goes back once more.
  await first.getByTestId('redo').click();
  await expect(app.getByRole('button', { name: 'Clear completed' })).toBeVisible({ timeout: 30_000 });
  await expect(later).not.toHaveClass(/undone/);
  await first.getByTestId('restore-to-here').click();
  await expect(later).toHaveClass(/undone/);

  // Fork from the first answer: a new project with its conversation.
  await first.getByTestId('fork-from-here').click();
  const link = first.getByTestId('fork-link');
  await expect(link).toBeVisible();
  const href = (await link.getAttribute('href'))!;
  const fork = href.split('/').pop()!;
  expect(fork).not.toBe(original);

  // Both projects are there, each with its conversation.
  const listed = await projects(page);
  const ids = listed.map((p) => p.id);
  expect(ids).toContain(original);
  expect(ids).toContain(fork);
  expect(listed.find((p) => p.id === fork)!.name).toMatch(/\(fork\)$/);

  await openIde(page, `/p/${fork}`);
  await expect(page.getByTestId('message-user')).toHaveCount(1);
  await expect(page.getByTestId('message-user').first()).toContainText('build a todo app');
  await expect(page.getByTestId('message-assistant')).toHaveCount(1);
  const forkFile = page.locator('[data-testid="file-entry"][data-path="src/App.jsx"]');
  await expect(forkFile).toBeVisible();

  await openIde(page, `/p/${original}`);
  await expect(page.getByTestId('message-assistant')).toHaveCount(2);
  await expect(page.getByTestId('message-assistant').last()).toHaveClass(/undone/);
});
