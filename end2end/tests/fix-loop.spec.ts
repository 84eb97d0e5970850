import { expect, test } from './fixtures';
import { newProject, screenshot, send } from './helpers';

const APP_READY = 180_000;

test('a misspelt dependency is fixed by one automatic attempt, shown with its cost, and the app runs', async ({ page }) => {
  await newProject(page);
  // The person types once.
  await send(page, 'broken dep');
  const broken = page.getByTestId('message-assistant').first();
  await expect(broken.locator('[data-testid="action"][data-kind="shell"]')).toHaveAttribute('data-status', 'failed', {
    timeout: APP_READY,
  });
  // Rivet sends the failure itself, as an automatic message with its count and cost.
  const automatic = page.getByTestId('message-automatic');
  await expect(automatic).toHaveCount(1, { timeout: APP_READY });
  await expect(automatic).toContainText('attempt 1 of 3');
  await expect(automatic).toContainText(/\(\d+ tokens used so far\)/);
  await expect(page.getByTestId('message-user').last()).toContainText('plugin-recat');
  // The fix reinstalls and starts the app.
  const fix = page.getByTestId('message-assistant').last();
  await expect(fix.locator('[data-testid="action"][data-kind="start"]')).toHaveAttribute('data-status', 'complete', {
    timeout: APP_READY,
  });
  const app = page.frameLocator('[data-testid="preview-frame"]');
  await expect(app.getByRole('heading', { name: 'Todos' })).toBeVisible({ timeout: APP_READY });
  await expect(page.getByTestId('message-automatic')).toHaveCount(1);
  // Nothing on screen still says the app is broken: each failure the fix
  // repaired says what fixed it, and none stays open.
  const open = page.locator('[data-testid="alert"][data-state="open"], [data-testid="build-result"][data-state="open"]');
  await expect(open).toHaveCount(0, { timeout: 30_000 });
  await expect(page.locator('[data-testid="alert"][data-state="resolved"]').first()).toBeVisible();
  await expect(page.getByTestId('alert-resolved').first()).toHaveText('fixed by automatic attempt 1');
  await screenshot(page, 'fix-loop.png');
});

test('with auto-fix off for the project, a failure waits for the person', async ({ page }) => {
  await newProject(page);
  const toggle = page.getByTestId('project-auto-fix');
  await expect(toggle).toBeChecked();
  // The choice is the project's, kept on the server: saved before the
  // reload, which would otherwise cancel the request carrying it.
  const saved = page.waitForResponse((r) => r.url().includes('/set_project_auto_fix') && r.ok());
  await toggle.uncheck();
  await saved;
  await page.reload();
  await expect(page.locator('body[data-hydrated="true"]')).toBeAttached();
  await expect(page.getByTestId('project-auto-fix')).not.toBeChecked();

  await send(page, 'broken dep');
  const install = page.getByTestId('message-assistant').first().locator('[data-testid="action"][data-kind="shell"]');
  await expect(install).toHaveAttribute('data-status', 'failed', { timeout: APP_READY });
  await expect(page.getByTestId('chat-stop')).toBeDisabled({ timeout: APP_READY });
  // Had the loop been on, its message would follow the failure at once.
  await page.waitForTimeout(3_000);
  await expect(page.getByTestId('message-automatic')).toHaveCount(0);
  await expect(page.getByTestId('message-user')).toHaveCount(1);
  await expect(page.getByTestId('alert').first()).toContainText('npm install');
});
