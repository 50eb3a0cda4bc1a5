// The official TypeScript SDK client against an example server:
//   node ts-client.mjs stdio CMD ARGS...   (spawn it)
//   node ts-client.mjs http URL            (Streamable HTTP)
// It prints one JSON line: what each call returned, for the Go test to check.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [mode, target, ...args] = process.argv.slice(2);
const transport = mode === "stdio"
  ? new StdioClientTransport({ command: target, args, stderr: "inherit" })
  : new StreamableHTTPClientTransport(new URL(target));
const client = new Client({ name: "mcpstack-interop-ts", version: "test" });
const out = {};
try {
  await client.connect(transport);
  out.server = client.getServerVersion();
  out.tools = (await client.listTools()).tools.map((t) => t.name);
  const call = async (name, a) => {
    const r = await client.callTool({ name, arguments: a });
    return { isError: !!r.isError, text: r.content?.[0]?.text ?? "", structured: r.structuredContent ?? null };
  };
  if (out.tools.includes("greet")) {
    out.greet = await call("greet", { name: "Ada" });
  }
  if (out.tools.includes("forecast")) {
    out.forecast = await call("forecast", { city: "Oslo", days: 2 });
    out.badDays = await call("forecast", { city: "Oslo", days: 9 });
    out.badCity = await call("forecast", { city: 5 });
    out.cities = (await client.readResource({ uri: "weather://cities" })).contents[0].text;
    out.rome = (await client.readResource({ uri: "weather://city/Rome" })).contents[0].text;
    out.prompt = (await client.getPrompt({ name: "plan_trip", arguments: { city: "Paris" } })).messages[0].content.text;
    out.complete = (await client.complete({ ref: { type: "ref/prompt", name: "plan_trip" }, argument: { name: "city", value: "l" } })).completion.values;
  }
} catch (e) {
  out.error = String(e?.stack ?? e);
} finally {
  await client.close().catch(() => {});
}
process.stdout.write(JSON.stringify(out) + "\n");
