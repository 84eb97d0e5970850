import { execSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect, test } from './fixtures';
import { newProject, send } from './helpers';

// The scripted provider answers "... mcp echo ..." with
// tests/fixtures/transcripts/agent-mcp.json: one call of everything__echo,
// then a summary that needs the tool's real answer.

const root = path.resolve(__dirname, '../..');

/** server-everything from the npm registry, installed once beside the Rust
 *  tests' copy (tests/mcp-servers/package.json pins it). */
function everythingServer(): string {
  const dir = path.join(root, 'target/tmp/mcp-servers');
  const script = path.join(dir, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
  const manifest = fs.readFileSync(path.join(root, 'tests/mcp-servers/package.json'));
  const current = fs.existsSync(path.join(dir, 'package.json')) && fs.readFileSync(path.join(dir, 'package.json')).equals(manifest);
  if (!current || !fs.existsSync(script)) {
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'package.json'), manifest);
    execSync('npm install --no-audit --no-fund --loglevel=error', { cwd: dir, stdio: 'inherit' });
  }
  return script;
}

test('an MCP server added in settings gives the agent its tools, and a call is approved in its card', async ({ page }) => {
  const script = everythingServer();
  await newProject(page);
  await page.getByTestId('mode-switch').getByText('Agent').click();
  await expect(page.getByTestId('mode-switch')).toHaveAttribute('data-mode', 'agent');

  await page.getByTestId('settings-toggle').click();
  await page.getByTestId('mcp-name').fill('everything');
  await page.getByTestId('mcp-command').fill('node');
  await page.getByTestId('mcp-args').fill(`${script}\nstdio`);
  await page.getByTestId('mcp-host').check();
  await page.getByTestId('mcp-env').fill('EVERYTHING_TOKEN=never-shown');
  await page.getByTestId('mcp-add').click();
  const row = page.locator('[data-testid="mcp-server"][data-name="everything"]');
  await expect(row).toBeVisible();
  await expect(page.getByTestId('mcp-name')).toHaveValue('');
  await expect(row.getByTestId('mcp-place')).toHaveText('on this machine (trusted)');
  await expect(row.getByTestId('mcp-status-text')).toHaveText('not started yet');
  await expect(page.getByTestId('settings')).not.toContainText('never-shown');
  // On in this project: off, then on again at once, each choice slowed on
  // its way so the second click comes before the list is read again; the
  // switch ends as the person left it, here and on the server.
  const slow = '**/api/choose_mcp_servers';
  await page.route(slow, async (route) => {
    await new Promise((done) => setTimeout(done, 400));
    await route.continue();
  });
  const on = row.getByTestId('mcp-on');
  await expect(on).toBeChecked();
  await on.uncheck();
  await on.check();
  await expect(on).toBeChecked();
  await expect(on).toBeEnabled();
  await page.unroute(slow);
  await page.getByTestId('settings-toggle').click();
  await page.getByTestId('settings-toggle').click();
  await expect(row.getByTestId('mcp-on')).toBeChecked();
  await page.getByTestId('settings-toggle').click();

  await send(page, 'use the mcp echo tool');
  const answer = page.getByTestId('message-assistant');
  const step = answer.getByTestId('agent-step').first();
  await expect(step).toHaveAttribute('data-status', 'waiting');
  await expect(step).toHaveAttribute('data-tool', 'everything__echo');
  const card = step.getByTestId('agent-diff');
  await expect(card).toContainText('MCP server: everything (runs on the host, trusted by the owner)');
  await expect(card).toContainText('tool: echo');
  await expect(card).toContainText('"message": "hello from the IDE"');
  await step.getByTestId('approve-step').click();
  await expect(step).toHaveAttribute('data-status', 'done');
  await expect(answer.getByTestId('agent-end')).toHaveText('Done.');
  await expect(answer).toContainText('The MCP server said: hello from the IDE.');
  await expect(answer).toHaveAttribute('data-status', 'complete');

  // The server ran: its status and tools are listed; then it is removed.
  await page.getByTestId('settings-toggle').click();
  await expect(row.getByTestId('mcp-status-text')).toContainText('ready,');
  await row.getByTestId('mcp-remove').click();
  await expect(row).toHaveCount(0);
});

test('a switch flipped after another tab changed the choice starts from that change', async ({ page }) => {
  const project = await newProject(page);
  const row = (name: string) => page.locator(`[data-testid="mcp-server"][data-name="${name}"]`);
  const names = ['tab-one', 'tab-two'];
  await page.getByTestId('settings-toggle').click();
  for (const name of names) {
    await page.getByTestId('mcp-name').fill(name);
    await page.getByTestId('mcp-command').fill('node');
    await page.getByTestId('mcp-args').fill(`${name}.js`);
    await page.getByTestId('mcp-add').click();
    await expect(row(name).getByTestId('mcp-on')).toBeChecked();
  }
  // This page turns tab-two off, and the settings close.
  await row('tab-two').getByTestId('mcp-on').uncheck();
  await expect(row('tab-two').getByTestId('mcp-on')).toBeEnabled();
  await page.getByTestId('settings-toggle').click();
  // Another tab turns it on again.
  const status = await page.evaluate(async (project) => {
    const body = JSON.stringify({ project, servers: ['tab-one', 'tab-two'] });
    const headers = { 'content-type': 'application/json' };
    return (await fetch('/api/choose_mcp_servers', { method: 'POST', headers, body })).status;
  }, project);
  expect(status).toBe(200);
  // Opened again, this page shows that; turning tab-one off leaves tab-two on.
  await page.getByTestId('settings-toggle').click();
  await expect(row('tab-two').getByTestId('mcp-on')).toBeChecked();
  await row('tab-one').getByTestId('mcp-on').uncheck();
  await expect(row('tab-one').getByTestId('mcp-on')).toBeEnabled();
  await page.getByTestId('settings-toggle').click();
  await page.getByTestId('settings-toggle').click();
  await expect(row('tab-one').getByTestId('mcp-on')).not.toBeChecked();
  await expect(row('tab-two').getByTestId('mcp-on')).toBeChecked();
  for (const name of names) {
    await row(name).getByTestId('mcp-remove').click();
    await expect(row(name)).toHaveCount(0);
  }
});
