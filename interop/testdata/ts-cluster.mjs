// The official TypeScript SDK client against replicas behind a balancer:
//   node ts-cluster.mjs URL
// It answers the server's sampling and elicitation requests, calls tools
// that make them, and prints one JSON line for the Go test to check.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CreateMessageRequestSchema, ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const [url] = process.argv.slice(2);
const client = new Client({ name: "mcpstack-interop-ts-cluster", version: "test" }, { capabilities: { sampling: {}, elicitation: {} } });
let sampled = 0, elicited = 0;
client.setRequestHandler(CreateMessageRequestSchema, async () => {
  sampled++;
  return { role: "assistant", model: "m", content: { type: "text", text: "Four." } };
});
client.setRequestHandler(ElicitRequestSchema, async () => {
  elicited++;
  return { action: "decline" };
});
const out = { calls: [] };
try {
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  const text = async (name, args) => (await client.callTool({ name, arguments: args })).content?.[0]?.text ?? "";
  for (let i = 0; i < 3; i++) {
    out.calls.push(await text("test_simple_text", {}));
    out.calls.push(await text("test_sampling", { prompt: "2+2?" }));
    out.calls.push(await text("test_elicitation", { message: "Who are you?" }));
    out.calls.push((await client.readResource({ uri: "test://static-text" })).contents[0].text);
  }
  out.sampled = sampled;
  out.elicited = elicited;
} catch (e) {
  out.error = String(e?.stack ?? e);
} finally {
  await client.close().catch(() => {});
}
process.stdout.write(JSON.stringify(out) + "\n");
