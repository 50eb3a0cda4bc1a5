// The official TypeScript SDK client exercising a third-party server
// (@modelcontextprotocol/server-everything, or any server) feature by
// feature, so that the traffic mcpstack proxy records covers the protocol:
//   node ts-everything.mjs stdio CMD ARGS...   (spawn it)
//   node ts-everything.mjs http URL            (Streamable HTTP)
// It answers the server's sampling, elicitation and roots requests, calls
// every tool it knows how to fill in, reads, subscribes, prompts and
// completes. It prints one JSON line: what it did, and the first error.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";

const [mode, target, ...args] = process.argv.slice(2);
const transport = mode === "stdio"
  ? new StdioClientTransport({ command: target, args, stderr: "ignore" })
  : new StreamableHTTPClientTransport(new URL(target));
const client = new Client(
  { name: "mcpstack-interop-everything", version: "test" },
  { capabilities: { sampling: {}, elicitation: { form: {} }, roots: { listChanged: true } } },
);
client.setRequestHandler(CreateMessageRequestSchema, async () => ({
  role: "assistant",
  model: "interop-model",
  content: { type: "text", text: "a sampled answer" },
  stopReason: "endTurn",
}));
// An elicitation is accepted with a value of the right kind for each
// field the server asks for.
const fieldValue = (p) => {
  if (p.enum) return p.enum[0];
  if (p.oneOf) return p.oneOf[0].const;
  if (p.default !== undefined) return p.default;
  switch (p.type) {
    case "boolean": return true;
    case "number": return p.minimum ?? 1;
    case "integer": return p.minimum ?? 1;
    case "array": return p.items?.enum ? [p.items.enum[0]] : (p.items?.anyOf ? [p.items.anyOf[0].const] : []);
  }
  switch (p.format) {
    case "email": return "ada@example.com";
    case "uri": return "https://example.com/ada";
    case "date": return "1815-12-10";
    case "date-time": return "1815-12-10T00:00:00Z";
  }
  return "Ada Lovelace";
};
client.setRequestHandler(ElicitRequestSchema, async (req) => {
  const content = {};
  for (const [name, p] of Object.entries(req.params.requestedSchema?.properties ?? {})) {
    content[name] = fieldValue(p);
  }
  return { action: "accept", content };
});
client.setRequestHandler(ListRootsRequestSchema, async () => ({
  roots: [{ uri: "file:///tmp/interop", name: "interop" }],
}));
const out = { calls: {}, logs: 0, progress: 0 };
client.setNotificationHandler(LoggingMessageNotificationSchema, () => { out.logs++; });

// The arguments of the tools this script knows; others are listed, not called.
const toolArgs = {
  "echo": { message: "hello through the proxy" },
  "get-sum": { a: 2, b: 40 },
  "get-tiny-image": {},
  "get-annotated-message": { messageType: "error", includeImage: true },
  "get-resource-links": { count: 3 },
  "get-resource-reference": { resourceType: "Blob", resourceId: 2 },
  "get-structured-content": { location: "Chicago" },
  "trigger-long-running-operation": { duration: 1, steps: 2 },
  "trigger-sampling-request": { prompt: "Say something", maxTokens: 20 },
  "trigger-elicitation-request": {},
  "get-roots-list": {},
  "toggle-simulated-logging": {},
  // go-sdk's conformance everything-server
  "test_simple_text": {},
  "test_image_content": {},
  "test_audio_content": {},
  "test_embedded_resource": {},
  "test_multiple_content_types": {},
  "test_error_handling": {},
  "test_tool_with_logging": {},
  "test_tool_with_progress": {},
  "test_sampling": { prompt: "Say something" },
  "test_elicitation": { message: "Your name?" },
};

try {
  await client.connect(transport);
  out.server = client.getServerVersion();
  out.protocol = transport.protocolVersion ?? null;
  await client.ping();
  const caps = client.getServerCapabilities() ?? {};
  if (caps.logging) {
    await client.setLoggingLevel("debug");
  }
  const tools = (await client.listTools()).tools;
  out.tools = tools.map((t) => t.name);
  for (const t of tools) {
    if (!(t.name in toolArgs) || t.execution?.taskSupport === "required") {
      continue;
    }
    // A tool the server cannot run here (a stateless server has no way to
    // ask the client) answers with a JSON-RPC error: noted, and on.
    try {
      const r = await client.callTool({ name: t.name, arguments: toolArgs[t.name] }, undefined, {
        onprogress: () => { out.progress++; },
        timeout: 20000,
      });
      out.calls[t.name] = { isError: !!r.isError, content: (r.content ?? []).map((c) => c.type) };
    } catch (e) {
      out.calls[t.name] = { rpcError: String(e?.message ?? e) };
    }
  }
  // A task-augmented call (2025-11-25 tasks): the stream polls tasks/get
  // and ends with tasks/result.
  const taskTool = tools.find((t) => t.execution?.taskSupport === "required" && t.name === "simulate-research-query");
  if (taskTool && caps.tasks?.requests?.tools?.call) {
    out.task = [];
    const stream = client.experimental.tasks.callToolStream(
      { name: taskTool.name, arguments: { topic: "interop" } }, undefined, { task: { ttl: 60000 }, timeout: 30000 });
    for await (const m of stream) {
      out.task.push(m.type);
    }
  }
  if (out.tools.includes("toggle-simulated-logging")) {
    await new Promise((resolve) => setTimeout(resolve, 300));
    await client.callTool({ name: "toggle-simulated-logging", arguments: {} }); // off again
  }
  if (caps.resources) {
    const resources = (await client.listResources()).resources;
    out.resources = resources.length;
    for (const r of resources.slice(0, 4)) {
      await client.readResource({ uri: r.uri });
    }
    const templates = (await client.listResourceTemplates()).resourceTemplates;
    out.templates = templates.map((t) => t.uriTemplate);
    for (const t of templates) {
      if (t.uriTemplate.includes("{resourceId}")) {
        await client.readResource({ uri: t.uriTemplate.replace("{resourceId}", "1") });
      }
    }
    if (caps.resources.subscribe && resources.length > 0) {
      await client.subscribeResource({ uri: resources[0].uri });
      await client.unsubscribeResource({ uri: resources[0].uri });
    }
  }
  if (caps.prompts) {
    const prompts = (await client.listPrompts()).prompts;
    out.prompts = prompts.map((p) => p.name);
    const values = { city: "Oslo", state: "Viken", department: "Engineering", name: "Alice", resourceType: "Text", resourceId: "1" };
    for (const p of prompts) {
      const a = {};
      for (const arg of p.arguments ?? []) {
        // An argument the server embeds as a resource URI gets a URI.
        a[arg.name] = values[arg.name] ?? (/uri/i.test(arg.name) ? "test://interop/resource" : "x");
      }
      try {
        await client.getPrompt({ name: p.name, arguments: a });
        if (caps.completions && (p.arguments ?? []).length > 0) {
          await client.complete({ ref: { type: "ref/prompt", name: p.name }, argument: { name: p.arguments[0].name, value: "E" } });
        }
      } catch (e) {
        (out.rpcErrors ??= []).push(`prompt ${p.name}: ${e?.message ?? e}`); // as for tools, above
      }
    }
  }
  // The server asks for the roots again; its request is answered before
  // the client leaves.
  await client.sendRootsListChanged();
  await new Promise((resolve) => setTimeout(resolve, 300));
} catch (e) {
  out.error = String(e?.stack ?? e);
} finally {
  if (mode !== "stdio") {
    await transport.terminateSession().catch(() => {});
  }
  await client.close().catch(() => {});
}
process.stdout.write(JSON.stringify(out) + "\n");
