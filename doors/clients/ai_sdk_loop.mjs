// An LLM tool loop without a model: the AI SDK's mock model calls Paddock's
// run_code through @ai-sdk/mcp, and the next step's prompt must carry the
// result. Prints what the mock model received as one JSON object.
//
//   node ai_sdk_loop.mjs URL [TOKEN]
import { generateText, stepCountIs } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { createMCPClient } from '@ai-sdk/mcp';

const [url, token] = process.argv.slice(2);

const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };

async function main() {
  const mcp = await createMCPClient({ transport: { type: 'http', url, headers: token ? { Authorization: `Bearer ${token}` } : {} } });
  const seen = [];
  const model = new MockLanguageModelV3({
    doGenerate: async (options) => {
      seen.push(options);
      if (seen.length === 1) {
        return {
          content: [{ type: 'tool-call', toolCallId: 'call-1', toolName: 'run_code',
            input: JSON.stringify({ language: 'python', code: 'import platform; print(sum(range(10)), platform.system())' }) }],
          finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage, warnings: [],
        };
      }
      return { content: [{ type: 'text', text: 'done' }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] };
    },
  });
  try {
    const tools = await mcp.tools();
    const result = await generateText({ model, tools, prompt: 'Add up 0..9 with Python.', stopWhen: stepCountIs(3) });
    const first = seen[0];
    const toolMsg = seen[1]?.prompt.find((m) => m.role === 'tool');
    const part = toolMsg?.content.find((p) => p.type === 'tool-result');
    return {
      steps: result.steps.length,
      text: result.text,
      calls: seen.length,
      toolsSeen: first.tools.map((t) => t.name).sort(),
      runCodeRequired: first.tools.find((t) => t.name === 'run_code')?.inputSchema.required ?? null,
      toolResult: part ? { toolName: part.toolName, output: part.output } : null,
    };
  } finally {
    await mcp.close();
  }
}

main().then(
  (out) => { console.log(JSON.stringify(out)); process.exit(0); },
  (err) => { console.error(err); process.exit(1); },
);
