import { test as base, type BrowserContext } from '@playwright/test';

export * from '@playwright/test';

/** The suite's `test`: every spec imports it from here. Each worker keeps one
 *  browser context for all its tests, so its HTTP cache and the code V8
 *  compiled from it (Rivet's WASM, Monaco, xterm.js) serve every test after
 *  the first, which then loads the IDE as a returning visitor does. Between
 *  tests its cookies are cleared (each test logs in, or tests that it must)
 *  and its pages closed; Rivet keeps nothing else in the browser (no local
 *  storage, IndexedDB or service worker). A test of a cold browser makes a
 *  context of its own (helpers.ts, `coldPage`). */
export const test = base.extend<object, { workerContext: BrowserContext }>({
  workerContext: [
    async ({ browser }, use, workerInfo) => {
      const { baseURL, viewport } = workerInfo.project.use;
      const context = await browser.newContext({ baseURL, viewport });
      await use(context);
      await context.close();
    },
    { scope: 'worker' },
  ],
  context: async ({ workerContext }, use) => {
    await workerContext.clearCookies();
    await use(workerContext);
    await Promise.all(workerContext.pages().map((page) => page.close()));
  },
});
