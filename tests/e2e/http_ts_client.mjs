// Streamable HTTP client on the TypeScript MCP SDK (@modelcontextprotocol/sdk 1.32.2), for
// http_e2e.py: connects to URL with StreamableHTTPClientTransport, lists the tools, calls
// get_invoice and get_note, and prints one JSON line with what it got.
//
//   node http_ts_client.mjs URL NODE_MODULES_ROOT
//
// With JSONGATE_E2E_TOKEN set, every request carries `Authorization: Bearer $JSONGATE_E2E_TOKEN`
// (an https URL's CA comes from NODE_EXTRA_CA_CERTS, as Node reads it).

import { createRequire } from 'node:module';
import { join } from 'node:path';

const [url, root] = process.argv.slice(2);
const require = createRequire(join(root, 'package.json'));
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js');

const out = {};
const client = new Client({ name: 'jsongate-e2e-ts-http', version: '1.0.0' });
const token = process.env.JSONGATE_E2E_TOKEN;
const requestInit = token ? { headers: { Authorization: `Bearer ${token}` } } : undefined;
await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit }));
out.tools = (await client.listTools()).tools.map((t) => t.name).sort();
for (const name of ['get_invoice', 'get_note']) {
    try {
        const r = await client.callTool({ name, arguments: { id: 'inv-1' } });
        out[name] = {
            isError: Boolean(r.isError),
            structured: r.structuredContent ?? null,
            texts: (r.content ?? []).map((b) => b.text ?? ''),
        };
    } catch (error) {
        out[name] = { exception: String(error?.message ?? error).slice(0, 300) };
    }
}
await client.close();
process.stdout.write(JSON.stringify(out) + '\n');
process.exit(0);
