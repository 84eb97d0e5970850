import { expect, test } from '@playwright/test';
import { TOKEN, openIde } from './helpers';

test('without the token the IDE asks for it, and the token opens it', async ({ page }) => {
  const refused = await page.goto('/new');
  expect(refused?.status()).toBe(401);
  await expect(page.getByTestId('login')).toBeVisible();
  await expect(page.getByTestId('chat-input')).toHaveCount(0);

  await page.getByTestId('login-token').fill('not-the-token-0123456789');
  await page.getByTestId('login-submit').click();
  await expect(page.getByRole('alert')).toContainText('not the right token');

  await page.getByTestId('login-token').fill(TOKEN);
  await page.getByTestId('login-submit').click();
  await expect(page.locator('body[data-hydrated="true"]')).toBeAttached();
  expect(new URL(page.url()).pathname).toMatch(/^\/p\/[a-z0-9]+$/);
  expect(page.url()).not.toContain('token=');
  const cookies = await page.context().cookies();
  const session = cookies.find((c) => c.name.startsWith('rivet-'));
  expect(session?.httpOnly).toBe(true);
  expect(session?.sameSite).toBe('Strict');
  expect(await page.evaluate(() => document.cookie)).not.toContain(TOKEN);
});

test('the API refuses requests without the token', async ({ request }) => {
  const response = await request.post('/api/send_message', { form: { project: 'x', text: 'hi' } });
  expect(response.status()).toBe(401);
  expect((await response.json()).code).toBe('unauthorized');
});

test('the IDE cannot be framed by other sites and sandboxes its preview', async ({ page }) => {
  const response = await openIde(page);
  expect(response?.headers()['content-security-policy']).toBe("frame-ancestors 'self'");
  const sandbox = await page.getByTestId('preview-frame').getAttribute('sandbox');
  for (const token of ['allow-scripts', 'allow-same-origin', 'allow-forms', 'allow-modals']) {
    expect(sandbox).toContain(token);
  }
  expect(sandbox).not.toContain('allow-top-navigation');
});
