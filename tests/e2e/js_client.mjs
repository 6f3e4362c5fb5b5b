// E2E client driver on the TypeScript MCP SDK (@modelcontextprotocol/sdk 1.32.2).
//
//   node js_client.mjs --script SCRIPT.json [--node-modules DIR] -- SERVER_COMMAND [ARGS...]
//   node js_client.mjs --script SCRIPT.json [--node-modules DIR] --url http://HOST:PORT/mcp
//
// With --url the client connects with StreamableHTTPClientTransport instead of starting a
// server on stdio.
// The SDK is loaded from DIR (default: target/e2e of this checkout, where setup.sh installs
// it). The script is a JSON list of steps, {"op": "list_tools"} or
// {"op": "call", "tool": NAME, "args": {...}, "timeout": SECONDS}; one JSON line is printed
// per step, with the same conventions as py_client.py (see README.md, "Driver output").
// tools/list is sent only when the script asks: the SDK checks structuredContent against
// an outputSchema only for tools it has listed.

import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const CONNECT_TIMEOUT = 15;
const CALL_TIMEOUT = 10;
const CLOSE_TIMEOUT = 3;
const MAX_TEXT = 500;
const MAX_JSON = 4000;
const MAX_DEPTH = 64;

function parseArgs(argv) {
    const options = { script: null, nodeModules: null, command: [], url: null };
    for (let i = 0; i < argv.length; i++) {
        const arg = argv[i];
        if (arg === '--') {
            options.command = argv.slice(i + 1);
            break;
        } else if (arg === '--script') {
            options.script = argv[++i];
        } else if (arg === '--url') {
            options.url = argv[++i];
        } else if (arg === '--node-modules') {
            options.nodeModules = argv[++i];
        } else {
            throw new Error(`unknown argument ${arg}`);
        }
    }
    if (!options.script || (options.command.length === 0) === !options.url) {
        throw new Error('usage: js_client.mjs --script SCRIPT [--node-modules DIR] (-- COMMAND [ARGS...] | --url URL)');
    }
    return options;
}

function loadScript(arg) {
    const text = arg.trimStart().startsWith('[') ? arg : readFileSync(arg, 'utf8');
    return JSON.parse(text);
}

function clip(text) {
    return text.length <= MAX_TEXT ? text : `${text.slice(0, 200)}...<${text.length} chars>`;
}

function depth(value) {
    let deepest = 0;
    const stack = [[value, 0]];
    while (stack.length > 0) {
        const [item, level] = stack.pop();
        if (item !== null && typeof item === 'object') {
            deepest = Math.max(deepest, level + 1);
            for (const child of Object.values(item)) stack.push([child, level + 1]);
        } else {
            deepest = Math.max(deepest, level);
        }
    }
    return deepest;
}

// JSON text with sorted member names and no spaces (as Python's json.dumps with sort_keys).
function canonical(value) {
    if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
    if (value !== null && typeof value === 'object') {
        const members = Object.keys(value)
            .sort()
            .filter((key) => value[key] !== undefined)
            .map((key) => `${JSON.stringify(key)}:${canonical(value[key])}`);
        return `{${members.join(',')}}`;
    }
    return JSON.stringify(value);
}

function summarize(value) {
    const levels = depth(value);
    if (levels > MAX_DEPTH) return { $deep: levels };
    const text = canonical(value);
    if (text.length > MAX_JSON) {
        const digest = createHash('sha256').update(text, 'utf8').digest('hex').slice(0, 16);
        return { $large: text.length, digest: `sha256:${digest}` };
    }
    return value;
}

function emit(record) {
    process.stdout.write(`${canonical(record)}\n`);
}

function describeError(error) {
    const record = { outcome: 'exception', class: error?.constructor?.name ?? typeof error };
    if (typeof error?.code === 'number') record.code = error.code;
    record.message = clip(String(error?.message ?? error));
    return record;
}

function describeResult(result) {
    const texts = (result.content ?? []).map((block) =>
        typeof block.text === 'string' ? clip(block.text) : `<${block.type}>`
    );
    const record = { outcome: 'result', isError: Boolean(result.isError), texts };
    if (result.structuredContent !== undefined) record.structuredContent = summarize(result.structuredContent);
    return record;
}

class Timeout extends Error {}

function withTimeout(promise, seconds) {
    let timer;
    const expiry = new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Timeout()), seconds * 1000);
    });
    return Promise.race([promise, expiry]).finally(() => clearTimeout(timer));
}

async function main() {
    const options = parseArgs(process.argv.slice(2));
    const here = dirname(fileURLToPath(import.meta.url));
    const root = resolve(options.nodeModules ?? join(here, '..', '..', 'target', 'e2e'));
    const anchor = join(root, 'package.json');
    if (!existsSync(join(root, 'node_modules', '@modelcontextprotocol', 'sdk'))) {
        throw new Error(`the TypeScript SDK is not installed under ${root}: run tests/e2e/setup.sh`);
    }
    const require = createRequire(anchor);
    const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
    const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');
    const steps = loadScript(options.script);

    let transport;
    if (options.url) {
        const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js');
        transport = new StreamableHTTPClientTransport(new URL(options.url));
    } else {
        transport = new StdioClientTransport({
            command: options.command[0],
            args: options.command.slice(1),
            env: { ...process.env },
            stderr: 'inherit',
        });
    }
    // Note the version connect() negotiates (the stdio transport does not keep it).
    let protocolVersion = null;
    const setVersion = transport.setProtocolVersion?.bind(transport);
    transport.setProtocolVersion = (version) => {
        protocolVersion = version;
        setVersion?.(version);
    };
    const client = new Client({ name: 'jsongate-e2e-ts', version: '1.0.0' });
    try {
        await withTimeout(client.connect(transport), CONNECT_TIMEOUT);
    } catch (error) {
        emit({ step: 'connect', ...(error instanceof Timeout ? { outcome: 'timeout' } : describeError(error)) });
        return;
    }
    emit({ step: 'connect', outcome: 'ok', protocolVersion });

    for (const [index, step] of steps.entries()) {
        const record = { step: index, op: step.op };
        if (step.tool !== undefined) record.tool = step.tool;
        const timeout = step.timeout ?? CALL_TIMEOUT;
        // The SDK's own timeout fires a little later than ours, so ours is the one seen.
        const requestOptions = { timeout: timeout * 1000 + 2000 };
        try {
            if (step.op === 'list_tools') {
                const listed = await withTimeout(client.listTools(undefined, requestOptions), timeout);
                Object.assign(record, { outcome: 'ok', tools: listed.tools.map((t) => t.name).sort() });
            } else if (step.op === 'call') {
                const params = { name: step.tool, arguments: step.args ?? {} };
                const result = await withTimeout(client.callTool(params, undefined, requestOptions), timeout);
                Object.assign(record, describeResult(result));
            } else {
                throw new Error(`unknown op ${step.op}`);
            }
        } catch (error) {
            Object.assign(record, error instanceof Timeout ? { outcome: 'timeout' } : describeError(error));
        }
        emit(record);
    }
    try {
        await withTimeout(client.close(), CLOSE_TIMEOUT);
    } catch (error) {
        process.stderr.write(`close: ${error}\n`);
    }
}

main()
    .then(() => process.exit(0))
    .catch((error) => {
        process.stderr.write(`${error?.stack ?? error}\n`);
        process.exit(2);
    });
