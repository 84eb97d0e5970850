import { expect, test } from './fixtures';
import { newProject, queueFaults, send, TOKEN } from './helpers';

test('an answer streams into the chat with its usage', async ({ page }) => {
  await newProject(page);
  // Slow enough (about 4 s) to be seen streaming even on a cold first page.
  await queueFaults({ 'chunk-size': 4, 'chunk-delay-ms': 100, when: 'hello there' });
  await send(page, 'hello there');
  const answer = page.getByTestId('message-assistant');
  await expect(answer).toHaveAttribute('data-status', 'streaming');
  await expect(answer).toContainText('Hello!');
  await expect(answer).toHaveAttribute('data-status', 'complete');
  // Multi-byte characters survive however the stream was cut.
  await expect(answer).toContainText('Ünïcödé ✓ and 日本語のテキスト');
  await expect(answer.getByTestId('message-usage')).toContainText('tokens');
});

test('stop ends the answer and keeps what arrived', async ({ page }) => {
  await newProject(page);
  await queueFaults({ 'chunk-size': 3, 'chunk-delay-ms': 150, when: 'hello there' });
  await send(page, 'hello there');
  const answer = page.getByTestId('message-assistant');
  await expect(answer).toContainText('Hello');
  await page.getByTestId('chat-stop').click();
  await expect(answer).toHaveAttribute('data-status', 'stopped');
  const kept = await answer.locator('.markdown').innerText();
  expect(kept.length).toBeGreaterThan(0);
  // Nothing more arrives after Stop.
  await page.waitForTimeout(800);
  expect(await answer.locator('.markdown').innerText()).toBe(kept);
  await expect(page.getByTestId('chat-send')).toBeEnabled();
});

test('a rejected key is named, and Retry asks again', async ({ page }) => {
  await newProject(page);
  await queueFaults({ status: 401, when: 'hello there' });
  await send(page, 'hello there');
  const failed = page.getByTestId('message-assistant').first();
  await expect(failed).toHaveAttribute('data-status', 'failed');
  await expect(failed.getByTestId('message-status')).toContainText('was rejected (401)');
  await failed.getByTestId('message-retry').click();
  await expect(page.getByTestId('message-assistant').last()).toHaveAttribute('data-status', 'complete');
  await expect(page.getByTestId('message-assistant').last()).toContainText('Hello!');
});

test('a stream cut mid-answer keeps the text and can be continued', async ({ page }) => {
  await newProject(page);
  await send(page, 'tell me a story');
  const answer = page.getByTestId('message-assistant');
  await expect(answer).toHaveAttribute('data-status', 'interrupted');
  await expect(answer).toContainText('Once upon a time');
  await answer.getByTestId('message-continue').click();
  await expect(answer).toHaveAttribute('data-status', 'complete');
  await expect(answer).toContainText('read the rest of the story');
});

test('code blocks in an answer are highlighted once it is complete', async ({ page }) => {
  await newProject(page);
  await send(page, 'show me a snippet');
  const answer = page.getByTestId('message-assistant');
  await expect(answer).toHaveAttribute('data-status', 'complete');
  const jsx = answer.locator('code.language-jsx');
  await expect(jsx).toHaveAttribute('data-highlighted', 'true');
  // The colorizer splits the code into classed tokens, and keeps its text.
  expect(await jsx.locator('span[class^="mtk"]').count()).toBeGreaterThan(5);
  await expect(jsx).toContainText('export default function Counter()');
  await expect(answer.locator('code.language-sh')).toHaveAttribute('data-highlighted', 'true');
});

test('a spent budget refuses the message and raising it lets the next one through', async ({ page }) => {
  const id = await newProject(page);
  // A model on this machine costs nothing, so a budget of $0 is spent at once.
  const changed = await page.request.patch(`/api/v1/projects/${id}`, {
    headers: { authorization: `Bearer ${TOKEN}` },
    data: { budget_usd: 0 },
  });
  expect(changed.status()).toBe(200);
  await expect(page.getByTestId('project-spend')).toHaveText('$0.0000 of $0.0000 spent');
  await send(page, 'hello there, on a budget');
  await expect(page.getByTestId('composer-error')).toContainText('raise the budget');
  await expect(page.getByTestId('message-user')).toHaveCount(0);
  // The refused text is back in the box, not lost.
  await expect(page.getByTestId('chat-input')).toHaveValue('hello there, on a budget');
  await page.getByTestId('budget-input').fill('2');
  await page.getByTestId('budget-raise').click();
  await expect(page.getByTestId('composer-error')).toHaveCount(0);
  await expect(page.getByTestId('project-spend')).toHaveText('$0.0000 of $2.00 spent');
  await send(page, 'hello there, on a budget');
  const answer = page.getByTestId('message-assistant').last();
  await expect(answer).toHaveAttribute('data-status', 'complete');
  await expect(answer.getByTestId('message-usage')).toContainText('$0.0000');
});
