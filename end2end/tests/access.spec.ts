import { expect, test } from './fixtures';
import { TOKEN, openIde } from './helpers';

test('without the token the IDE asks for it, and the token opens it', async ({ page }) => {
  const refused = await page.goto('/import?from=link');
  expect(refused?.status()).toBe(401);
  await expect(page.getByTestId('login')).toBeVisible();
  await expect(page.getByTestId('chat-input')).toHaveCount(0);

  await page.getByTestId('login-token').fill('not-the-token-0123456789');
  await page.getByTestId('login-submit').click();
  await expect(page.getByRole('alert')).toContainText('not the right token');

  await page.getByTestId('login-token').fill(TOKEN);
  await page.getByTestId('login-submit').click();
  await expect(page.locator('body[data-hydrated="true"]')).toBeAttached();
  // The form posts to /login and leads back to the page that asked.
  expect(new URL(page.url()).pathname).toBe('/import');
  expect(new URL(page.url()).search).toBe('?from=link');
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

test('a login link whose path names another host keeps the token on the IDE', async ({ page, baseURL }) => {
  // The path itself is `//evil.example/x`: the host stays the IDE's.
  const refused = await page.goto(`${baseURL}//evil.example/x`);
  expect(refused?.status()).toBe(401);
  const form = page.getByTestId('login');
  expect(await form.getAttribute('action')).toBe('/login');
  expect(await form.locator('input[name="next"]').getAttribute('value')).toBe('/');
  await page.getByTestId('login-token').fill(TOKEN);
  await page.getByTestId('login-submit').click();
  await expect(page.getByTestId('new-project')).toBeVisible();
  expect(new URL(page.url()).host).toBe(new URL(refused!.url()).host);
  expect(new URL(page.url()).pathname).toBe('/');
});

test('the IDE cannot be framed by other sites, loads images only from itself, and sandboxes its preview', async ({ page }) => {
  const response = await openIde(page);
  const policy = response?.headers()['content-security-policy'] ?? '';
  expect(policy).toContain("frame-ancestors 'self'");
  expect(policy).toContain("img-src 'self' data: blob:");
  const sandbox = await page.getByTestId('preview-frame').getAttribute('sandbox');
  for (const token of ['allow-scripts', 'allow-same-origin', 'allow-forms', 'allow-modals']) {
    expect(sandbox).toContain(token);
  }
  expect(sandbox).not.toContain('allow-top-navigation');
});
