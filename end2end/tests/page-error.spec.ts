import { expect, test } from './fixtures';
import { newProject, send } from './helpers';

const APP_READY = 120_000;

test('a page that throws on load shows the error as a build result, and the fix loop answers it', async ({ page }) => {
  await newProject(page);
  await send(page, 'page throws');
  // The preview loads the page; the reporter the proxy put into it posts the
  // error to the IDE's page, which hands it to the server.
  const frame = page.frameLocator('[data-testid="preview-frame"]');
  await expect(frame.locator('#list')).toBeAttached({ timeout: APP_READY });
  const result = page.locator('[data-testid="build-result"][data-stage="PageError"]').first();
  await expect(result).toBeVisible({ timeout: APP_READY });
  await expect(result).toContainText('the page threw an error');
  await expect(result).toContainText('app.js');
  await result.locator('summary').click();
  await expect(result).toContainText("reading 'map'");
  // The automatic attempt gives the list its items.
  await expect(page.getByTestId('message-assistant').last()).toContainText('The list renders now', {
    timeout: APP_READY,
  });
  await page.getByTestId('preview-reload').click();
  await expect(frame.locator('#list li')).toHaveCount(3, { timeout: APP_READY });
});
