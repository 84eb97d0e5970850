import { expect, test } from './fixtures';
import { newProject, send } from './helpers';

test('a plan runs nothing until "Build this plan" builds it in Build mode', async ({ page }) => {
  await newProject(page);
  await expect(page.locator('body[data-hydrated="true"]')).toBeAttached();
  const modes = page.getByTestId('mode-switch');
  await modes.getByText('Plan').click();
  await expect(modes).toHaveAttribute('data-mode', 'plan');

  await send(page, 'plan a greeting');
  const plan = page.getByTestId('message-assistant').last();
  await expect(plan).toHaveAttribute('data-status', 'complete');
  await expect(plan.getByTestId('action')).toHaveAttribute('data-status', 'planned');
  const file = page.locator('[data-testid="file-entry"][data-path="greeting.txt"]');
  await expect(file).toHaveCount(0);

  await plan.getByTestId('message-build-plan').click();
  await expect(modes).toHaveAttribute('data-mode', 'build');
  await expect(page.getByTestId('message-assistant')).toHaveCount(2);
  const built = page.getByTestId('message-assistant').last();
  await expect(built).toHaveAttribute('data-status', 'complete');
  await expect(built.getByTestId('action')).toHaveAttribute('data-status', 'complete');
  await expect(file).toBeVisible();
});
