// agent.loop: the durable tool loop of an agent run. Each model turn (agent.model) and each tool call
// (agent.tool, a child workflow run) is its own journaled step under the loop's path, so a resumed run
// replays finished turns and tool calls from the journal instead of repeating them; the loop itself
// only decides what comes next from those recorded outputs.
import * as v from "valibot";
import type { ModelMessage, ModelTool, ModelToolCall } from "../../models/contract";
import { Cancelled, StepError } from "../errors";
import { defineKind, type StepContext } from "../kind";
import { ask } from "./ai-shared";
import type { Step } from "../workflow-types";

const TOOL = /^workflows\.[a-z0-9][a-z0-9_-]*$/;

export const loopSchema = v.strictObject({
  model: v.optional(v.pipe(v.string(), v.minLength(1))),
  instructions: v.pipe(v.string(), v.minLength(1)),
  tools: v.optional(v.array(v.pipe(v.string(), v.regex(TOOL, "must name a workflow: workflows.<slug>"))), []),
  maxSteps: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(100)), 10),
  input: v.optional(v.record(v.string(), v.unknown()), {}),
});

/** What a model turn records: enough to rebuild the conversation on resume. */
interface TurnOutput {
  text: string;
  toolCalls: ModelToolCall[];
  model: string;
}

const modelSchema = v.strictObject({
  model: v.optional(v.string()),
  system: v.string(),
  messages: v.array(v.custom<ModelMessage>((m) => typeof m === "object" && m !== null)),
  tools: v.array(v.custom<ModelTool>((t) => typeof t === "object" && t !== null)),
});

const toolSchema = v.strictObject({
  workflow: v.nullable(v.string()),
  name: v.string(),
  arguments: v.record(v.string(), v.unknown()),
});

/** One model call. Never retried by the engine: the model gateway has its own retry policy. */
export const agentModel = defineKind({
  type: "agent.model",
  configAt: "with",
  internal: true,
  schema: modelSchema,
  literal: ["model", "system", "messages", "tools"],
  async run(config, ctx): Promise<TurnOutput> {
    const r = await ask(ctx, {
      model: config.model,
      capability: "text",
      system: config.system,
      messages: config.messages,
      tools: config.tools.length ? config.tools : undefined,
      temperature: 0,
    });
    return { text: r.text, toolCalls: r.toolCalls, model: r.model };
  },
});

/**
 * One tool call: a child run of the workflow. Its failure is the tool's answer to the model (the
 * agent may recover), not the run's failure; a shutdown (Cancelled) leaves the step to run again.
 */
export const agentTool = defineKind({
  type: "agent.tool",
  configAt: "with",
  internal: true,
  schema: toolSchema,
  literal: ["workflow", "name", "arguments"],
  async run(config, ctx) {
    if (!config.workflow) return { error: `unknown tool "${config.name}"` };
    try {
      return { output: await ctx.services.invokeWorkflow(config.workflow, config.arguments, { step: ctx.path }) };
    } catch (e) {
      if (e instanceof Cancelled) throw e;
      return { error: (e as Error).message };
    }
  },
});

function leaf(name: string, type: string, config: Record<string, unknown>): Step {
  return { name, type, config, children: {}, retry: "never" };
}

async function toolList(ctx: StepContext, targets: string[]): Promise<{ tools: ModelTool[]; byName: Map<string, string> }> {
  const tools: ModelTool[] = [];
  const byName = new Map<string, string>();
  for (const target of targets) {
    const d = await ctx.services.describeWorkflow?.(target);
    if (!d) throw new StepError(`tool ${target} is not a workflow of this tenant`, "unknown_tool", { retryable: false });
    // `$schema` is noise to providers (some refuse unknown keywords in tool parameters).
    const { $schema: _, ...parameters } = d.inputSchema ?? { type: "object", properties: {} };
    tools.push({ name: d.slug, description: d.description ?? `Runs the workflow ${d.slug}`, parameters });
    byName.set(d.slug, target);
  }
  return { tools, byName };
}

export const agentLoop = defineKind({
  type: "agent.loop",
  configAt: "with",
  internal: true,
  schema: loopSchema,
  literal: ["model", "instructions", "tools"],
  async run(config, ctx) {
    const { tools, byName } = await toolList(ctx, config.tools);
    const scope = ctx.childScope({});
    const messages: ModelMessage[] = [{ role: "user", content: JSON.stringify(config.input, null, 2) }];
    let calls = 0;
    for (let turn = 1; turn <= config.maxSteps; turn++) {
      const modelStep = leaf(`turn-${turn}`, "agent.model", { ...(config.model ? { model: config.model } : {}), system: config.instructions, messages: [...messages], tools });
      const reply = (await ctx.runBlock([modelStep], ctx.path, scope)).last as TurnOutput;
      messages.push({ role: "assistant", content: reply.text, ...(reply.toolCalls.length ? { toolCalls: reply.toolCalls } : {}) });
      if (reply.toolCalls.length === 0) return { answer: reply.text, turns: turn, toolCalls: calls, model: reply.model };
      for (const [i, call] of reply.toolCalls.entries()) {
        calls++;
        const step = leaf(`tool-${turn}-${i + 1}`, "agent.tool", { workflow: byName.get(call.name) ?? null, name: call.name, arguments: call.arguments ?? {} });
        const result = (await ctx.runBlock([step], ctx.path, scope)).last;
        messages.push({ role: "tool", toolCallId: call.id, content: JSON.stringify(result) });
      }
    }
    throw new StepError(`the agent did not answer within maxSteps (${config.maxSteps} model turns)`, "max_steps_exceeded", { retryable: false });
  },
});

export const agentKinds = [agentLoop, agentModel, agentTool];
