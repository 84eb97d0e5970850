import { expect, test } from './fixtures';
import { newProject, send } from './helpers';

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

test('an answer format chosen for the model is kept and used for its next answer', async ({ page }) => {
  await newProject(page);
  const openSettings = async () => {
    await expect(page.locator('body[data-hydrated="true"]')).toBeAttached();
    await page.getByTestId('settings-toggle').click();
    await expect(page.getByTestId('settings-format')).toBeVisible();
  };
  await openSettings();
  const format = page.getByTestId('settings-format');
  await expect(format).toHaveValue('');
  await expect(format.locator('option').first()).toHaveText(/^As configured: /);
  await format.selectOption('tools');
  await page.getByTestId('settings-save').click();
  await expect(page.getByTestId('settings-status')).toHaveText('Saved.');
  try {
    await page.reload();
    await openSettings();
    await expect(page.getByTestId('settings-format')).toHaveValue('tools');
    await page.getByTestId('settings-toggle').click();
    // The next Build request offers the model its tools.
    await send(page, 'hello there, in tools');
    await expect(page.getByTestId('message-assistant')).toHaveAttribute('data-status', 'complete');
    const log: { last_user: string; tools: string[] }[] = await (await fetch(`${mock}/mock/log`)).json();
    const asked = log.filter((entry) => entry.last_user.includes('hello there, in tools'));
    expect(asked.length).toBeGreaterThan(0);
    expect(asked[0].tools).toEqual(expect.arrayContaining(['write_file', 'run_shell_command']));
  } finally {
    // The suite's later tests answer in tags.
    await page.reload();
    await openSettings();
    await page.getByTestId('settings-format').selectOption('');
    await page.getByTestId('settings-save').click();
    await expect(page.getByTestId('settings-status')).toHaveText('Saved.');
  }
});

test("the rules set in the settings go with the next answer, which names them", async ({ page }) => {
  await newProject(page);
  await expect(page.locator('body[data-hydrated="true"]')).toBeAttached();
  await page.getByTestId('settings-toggle').click();
  const app = page.getByTestId('settings-app-rules');
  const own = page.getByTestId('settings-project-rules');
  await expect(own).toBeVisible();
  await expect(page.getByText("This project's rules (AGENTS.md)")).toBeVisible();
  try {
    await app.fill('Always answer in English.');
    await own.fill('Name components in PascalCase.');
    await page.getByTestId('settings-rules-save').click();
    await expect(page.getByTestId('settings-rules-status')).toHaveText('Saved');
    await expect(page.locator('[data-testid="file-entry"][data-path="AGENTS.md"]')).toBeVisible();
    await page.getByTestId('settings-toggle').click();
    await send(page, 'hello there, with rules');
    const answer = page.getByTestId('message-assistant').last();
    await expect(answer).toHaveAttribute('data-status', 'complete');
    await expect(answer.getByTestId('message-rules')).toHaveText('Rules: AGENTS.md, settings');
    const log: { last_user: string; system: string }[] = await (await fetch(`${mock}/mock/log`)).json();
    const asked = log.filter((entry) => entry.last_user.includes('hello there, with rules'));
    expect(asked.length).toBeGreaterThan(0);
    expect(asked[0].system).toContain('Always answer in English.');
    expect(asked[0].system).toContain('Name components in PascalCase.');
  } finally {
    // The suite's later answers carry no app-wide rules.
    await page.reload();
    await expect(page.locator('body[data-hydrated="true"]')).toBeAttached();
    await page.getByTestId('settings-toggle').click();
    await page.getByTestId('settings-app-rules').fill('');
    await page.getByTestId('settings-rules-save').click();
    await expect(page.getByTestId('settings-rules-status')).toHaveText('Saved');
  }
});

test('a model picked in the composer answers the next message, and the answer names it', async ({ page }) => {
  await newProject(page);
  await expect(page.locator('body[data-hydrated="true"]')).toBeAttached();
  const picker = page.getByTestId('composer-model');
  await picker.focus();
  await expect(picker.locator('option[value="rivet-lite"]')).toBeAttached();
  await picker.selectOption('rivet-lite');
  await send(page, 'hello there, from the lite model');
  const answer = page.getByTestId('message-assistant').last();
  await expect(answer).toHaveAttribute('data-status', 'complete');
  await expect(answer.getByTestId('message-model')).toHaveText('rivet-lite');
  const log: { last_user: string; model: string }[] = await (await fetch(`${mock}/mock/log`)).json();
  const asked = log.filter((entry) => entry.last_user.includes('hello there, from the lite model'));
  expect(asked.map((entry) => entry.model)).toEqual(['rivet-lite']);
});

test("a project's secret is listed by name, reaches a new shell masked, and is removed", async ({ page }) => {
  await newProject(page);
  await expect(page.locator('body[data-hydrated="true"]')).toBeAttached();
  await page.getByTestId('settings-toggle').click();
  const value = page.getByTestId('settings-secret-value');
  await page.getByTestId('settings-secret-name').fill('STRIPE_KEY');
  await value.fill('sk_e2e_hidden_value');
  await page.getByTestId('settings-secret-add').click();
  const listed = page.getByTestId('settings-secret');
  await expect(listed).toHaveCount(1);
  await expect(listed).toContainText('STRIPE_KEY');
  await expect(value).toHaveValue('');
  await expect(page.getByTestId('settings')).not.toContainText('sk_e2e_hidden_value');
  await page.getByTestId('settings-toggle').click();

  // A shell started now has it, and what it prints shows the name instead.
  await page.getByTestId('terminal-new').click();
  const shell = page.getByTestId('terminal-shell');
  await expect(shell.locator('.xterm')).toBeVisible();
  await shell.locator('.xterm').click();
  await expect(async () => {
    await page.keyboard.type('echo "key=$STRIPE_KEY"');
    await page.keyboard.press('Enter');
    await expect(shell.locator('.xterm-rows')).toContainText('key=[STRIPE_KEY]', { timeout: 5_000 });
  }).toPass({ timeout: 60_000 });
  await expect(shell.locator('.xterm-rows')).not.toContainText('sk_e2e_hidden_value');

  await page.getByTestId('settings-toggle').click();
  await page.getByTestId('settings-secret-remove').click();
  await expect(listed).toHaveCount(0);
});
