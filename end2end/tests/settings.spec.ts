import { expect, test } from '@playwright/test';
import { newProject } from './helpers';

// The suite's server lists the scripted provider and a port nothing listens
// on as its local servers (playwright.config.ts).
const mock = process.env.RIVET_E2E_MOCK!;

test('the settings find the local model server and a model picked fills the form', async ({ page }) => {
  await newProject(page);
  await page.getByTestId('settings-toggle').click();
  // Start from another provider, so the pick is seen to change the form.
  await page.getByTestId('settings-provider').selectOption('openai');
  await expect(page.getByTestId('settings-base-url')).not.toHaveValue(`${mock}/v1`);

  await page.getByTestId('find-local-models').click();
  const servers = page.getByTestId('local-server');
  await expect(servers).toHaveCount(2);
  await expect(page.getByTestId('local-models-summary')).toHaveText('Pick a model, then Save.');
  await expect(servers.nth(0)).toContainText(mock);
  await expect(servers.nth(1)).toContainText('http://127.0.0.1:9');
  await expect(servers.nth(1)).toContainText('connection refused');
  await expect(servers.nth(1).getByTestId('local-model')).toHaveCount(0);

  await servers.nth(0).getByTestId('local-model').filter({ hasText: 'rivet-replay' }).click();
  await expect(page.getByTestId('settings-provider')).toHaveValue('custom');
  await expect(page.getByTestId('settings-base-url')).toHaveValue(`${mock}/v1`);
  await expect(page.getByTestId('settings-model')).toHaveValue('rivet-replay');
});
