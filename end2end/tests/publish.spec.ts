import { expect, test, type Page } from './fixtures';
import { actions, newProject, send } from './helpers';

const APP_READY = 180_000;
const PUBLISHED = 180_000;

async function publish(page: Page, version: number) {
  await page.getByTestId('publish-button').click();
  const row = page.locator(`[data-testid="publish-version"][data-version="${version}"]`);
  await expect(row).toContainText('live', { timeout: PUBLISHED });
}

// The todo app, published from the settings: a stranger's browser (no
// cookie) opens it at the project's own address and uses it; the page there
// cannot read the IDE's API even in the owner's browser; a second version
// goes live and the first comes back with Roll back.
test('the todo app is published at an address of its own, used by a stranger, and rolled back', async ({ page, browser }) => {
  const id = await newProject(page);
  await send(page, 'build a todo app');
  const preview = page.frameLocator('[data-testid="preview-frame"]');
  await expect(preview.getByRole('heading', { name: 'Todos' })).toBeVisible({ timeout: APP_READY });

  await page.getByTestId('settings-toggle').click();
  await publish(page, 1);
  const link = page.getByTestId('publish-url');
  const url = (await link.getAttribute('href'))!;
  expect(url).toMatch(new RegExp(`^http://${id}\\.site\\.localhost:\\d+/$`));

  const strangers = await browser.newContext();
  const stranger = await strangers.newPage();
  await stranger.goto(url);
  await expect(stranger.getByRole('heading', { name: 'Todos' })).toBeVisible();
  await stranger.getByLabel('New todo').fill('buy milk');
  await stranger.getByRole('button', { name: 'Add' }).click();
  await expect(stranger.getByRole('listitem')).toContainText('buy milk');
  expect(await stranger.evaluate(() => document.querySelectorAll('script[src*="rivet"], script[src*="pkg/"]').length)).toBe(0);

  // In the owner's own browser, the published page gets nothing from the IDE.
  const ide = new URL(page.url()).origin;
  const mine = await page.context().newPage();
  await mine.goto(url);
  await expect(mine.getByRole('heading', { name: 'Todos' })).toBeVisible();
  const read = await mine.evaluate(async (ide) => {
    try {
      const response = await fetch(`${ide}/api/v1/projects`, { credentials: 'include' });
      return `read ${response.status} ${(await response.text()).slice(0, 40)}`;
    } catch {
      return 'blocked';
    }
  }, ide);
  expect(read).toBe('blocked');
  expect(await mine.evaluate(() => document.cookie)).toBe('');
  await mine.close();

  // A second version, then back to the first.
  await page.getByTestId('settings-toggle').click();
  await send(page, 'add a clear completed button');
  await expect(actions(page, 'edit')).toHaveAttribute('data-status', 'complete');
  await page.getByTestId('settings-toggle').click();
  await publish(page, 2);
  await stranger.reload();
  await expect(stranger.getByRole('button', { name: 'Clear completed' })).toBeVisible();
  await page.locator('[data-testid="publish-version"][data-version="1"]').getByTestId('publish-rollback').click();
  await expect(page.locator('[data-testid="publish-version"][data-version="1"]')).toContainText('live');
  await stranger.reload();
  await expect(stranger.getByRole('heading', { name: 'Todos' })).toBeVisible();
  await expect(stranger.getByRole('button', { name: 'Clear completed' })).toHaveCount(0);
  await strangers.close();
});
