import { expect, test, type Page } from './fixtures';
import { TOKEN, actions, openIde, send } from './helpers';
import { OwnServer } from './own-server';

const APP_READY = 180_000;

function preview(page: Page) {
  return page.frameLocator('[data-testid="preview-frame"]');
}

/** The projects the server knows, through the HTTP API. */
async function projects(page: Page, server: OwnServer): Promise<{ id: string; name: string }[]> {
  const response = await page.request.get(server.url('/api/v1/projects'), {
    headers: { authorization: `Bearer ${TOKEN}` },
  });
  expect(response.ok()).toBe(true);
  return response.json();
}

// This test stops its server, so it runs one of its own.
const server = new OwnServer(Number(process.env.RIVET_E2E_OWN_PORT));
test.beforeAll(() => server.start());
test.afterAll(() => server.dispose());

test('restore to the first answer brings its version back to the preview, a fork keeps it, and both survive kill -9', async ({ page }) => {
  await openIde(page, server.url('/new'));
  const original = new URL(page.url()).pathname.split('/').pop()!;
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
  const listed = await projects(page, server);
  const ids = listed.map((p) => p.id);
  expect(ids).toContain(original);
  expect(ids).toContain(fork);
  expect(listed.find((p) => p.id === fork)!.name).toMatch(/\(fork\)$/);

  // The server is killed and started again on the same data: the projects
  // page lists both, and each opens with its conversation and files.
  await server.kill();
  await server.start();
  await openIde(page, server.url('/'));
  for (const id of [original, fork]) {
    await expect(page.locator(`[data-testid="project-item"][data-project="${id}"]`)).toBeVisible();
  }
  await page.locator(`[data-testid="project-item"][data-project="${fork}"]`).getByRole('link').click();
  await expect(page).toHaveURL(new RegExp(`/p/${fork}$`));
  await expect(page.getByTestId('message-user')).toHaveCount(1);
  await expect(page.getByTestId('message-user').first()).toContainText('build a todo app');
  await expect(page.getByTestId('message-assistant')).toHaveCount(1);
  const forkFile = page.locator('[data-testid="file-entry"][data-path="src/App.jsx"]');
  await expect(forkFile).toBeVisible();

  await openIde(page, server.url(`/p/${original}`));
  await expect(page.getByTestId('message-assistant')).toHaveCount(2);
  await expect(page.getByTestId('message-assistant').last()).toHaveClass(/undone/);
  await expect(page.getByTestId('message-user').first()).toContainText('build a todo app');
});
