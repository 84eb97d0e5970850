import { createServer } from 'node:http';

const port = Number(process.env.PORT) || 3000;

/** The items the API keeps, in memory: they are gone after a restart. */
const items = [{ id: 1, name: 'First item' }];

function send(res, status, body) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

async function readJson(req) {
  let text = '';
  for await (const chunk of req) text += chunk;
  return text ? JSON.parse(text) : {};
}

async function handle(req, res) {
  const { pathname } = new URL(req.url, 'http://localhost');
  if (req.method === 'GET' && pathname === '/') {
    return send(res, 200, { message: 'Hello from the Node API', routes: ['GET /api/items', 'POST /api/items'] });
  }
  if (req.method === 'GET' && pathname === '/api/items') {
    return send(res, 200, items);
  }
  if (req.method === 'POST' && pathname === '/api/items') {
    const { name } = await readJson(req);
    if (typeof name !== 'string' || !name.trim()) {
      return send(res, 400, { error: 'an item needs a name' });
    }
    const item = { id: items.length + 1, name: name.trim() };
    items.push(item);
    return send(res, 201, item);
  }
  return send(res, 404, { error: 'not found' });
}

const server = createServer((req, res) => {
  handle(req, res).catch(() => send(res, 400, { error: 'invalid request' }));
});

server.listen(port, () => {
  console.log(`API listening on http://localhost:${port}`);
});
