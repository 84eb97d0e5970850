import { expect, type Page } from '@playwright/test';

/** Opens the IDE and waits until the WASM bundle has hydrated the page. */
export async function openIde(page: Page, path = '/') {
  const response = await page.goto(path);
  await expect(page.locator('body[data-hydrated="true"]')).toBeAttached();
  return response;
}
