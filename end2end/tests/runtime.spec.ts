import { expect, test, type Page } from './fixtures';
import { newProject, openIde } from './helpers';

/** Sets the project's runtime through its server function, from the page
 *  (same origin, the session cookie). */
async function setRuntime(page: Page, project: string, runtime: string) {
  const status = await page.evaluate(
    async ([p, r]) => {
      const body = new URLSearchParams({ project: p, runtime: r });
      const response = await fetch('/api/set_project_runtime', { method: 'POST', body });
      return response.status;
    },
    [project, runtime],
  );
  expect(status).toBe(200);
}

test('the top bar names the project runtime', async ({ page }) => {
  await newProject(page);
  const status = page.getByTestId('runtime-status');
  await expect(status).toHaveAttribute('data-runtime', 'sandbox');
  await expect(status).toContainText('Sandbox');
  await expect(page.getByTestId('runtime-error')).toHaveCount(0);
});

test('the settings switch the project runtime and it stays switched', async ({ page }) => {
  const project = await newProject(page);
  await page.getByTestId('settings-toggle').click();
  const select = page.getByTestId('runtime-select');
  await expect(select).toBeEnabled();
  await select.selectOption('webcontainer');
  await expect(page.getByTestId('runtime-status')).toHaveAttribute('data-runtime', 'webcontainer');
  await openIde(page, `/p/${project}`);
  await expect(page.getByTestId('runtime-status')).toHaveAttribute('data-runtime', 'webcontainer');
  await page.getByTestId('settings-toggle').click();
  await page.getByTestId('runtime-select').selectOption('sandbox');
  await expect(page.getByTestId('runtime-status')).toHaveAttribute('data-runtime', 'sandbox');
});

test('without cross-origin isolation a WebContainer project says why and switches to the sandbox', async ({ page }) => {
  const project = await newProject(page);
  await setRuntime(page, project, 'webcontainer');
  // A proxy that drops the isolation headers: the page loads, but
  // crossOriginIsolated is false and SharedArrayBuffer is withheld.
  await page.route(`**/p/${project}*`, async (route) => {
    const response = await route.fetch();
    const headers = { ...response.headers() };
    delete headers['cross-origin-opener-policy'];
    delete headers['cross-origin-embedder-policy'];
    await route.fulfill({ response, headers });
  });
  await openIde(page, `/p/${project}`);
  expect(await page.evaluate(() => window.crossOriginIsolated)).toBe(false);
  const error = page.getByTestId('runtime-error');
  await expect(error).toBeVisible();
  await expect(error).toContainText('crossOriginIsolated is false');
  await page.getByTestId('runtime-switch-sandbox').click();
  await expect(error).toHaveCount(0);
  await expect(page.getByTestId('runtime-status')).toHaveAttribute('data-runtime', 'sandbox');
  await page.unroute(`**/p/${project}*`);
  await openIde(page, `/p/${project}`);
  await expect(page.getByTestId('runtime-status')).toHaveAttribute('data-runtime', 'sandbox');
});
