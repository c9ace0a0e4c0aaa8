/**
 * Test-only Pi extension: registers pi-ai's offline faux provider ("faux"/"faux-1") whose every reply
 * is decided by the test process. Each model request posts the transcript to PIUE_TEST_MODEL_URL
 * (a {@link ScriptedModel} server) and turns the answer into an assistant message. The step re-queues
 * itself, so it survives any number of turns, prompts and `/reload`.
 */
import { fauxAssistantMessage, fauxProvider, fauxToolCall } from "@earendil-works/pi-ai";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

interface ModelReply {
  toolCalls?: { name: string; arguments: Record<string, unknown> }[];
  text?: string;
  error?: string;
}

export default function fauxTestModel(pi: ExtensionAPI): void {
  const url = process.env.PIUE_TEST_MODEL_URL;
  // One huge token per block: streaming chunk by chunk would only add events the tests never read.
  const faux = fauxProvider({ provider: "faux", models: [{ id: "faux-1" }], tokenSize: { min: 1_000_000, max: 1_000_000 } });
  const step = async (context: { messages: unknown[] }) => {
    faux.appendResponses([step]);
    if (!url) return fauxAssistantMessage("PIUE_TEST_MODEL_URL is not set", { stopReason: "error", errorMessage: "no model server" });
    let reply: ModelReply;
    try {
      const response = await fetch(url, { method: "POST", body: JSON.stringify({ messages: context.messages }) });
      reply = (await response.json()) as ModelReply;
    } catch (error) {
      reply = { error: `model server unreachable: ${(error as Error).message}` };
    }
    if (reply.error) return fauxAssistantMessage(reply.error, { stopReason: "error", errorMessage: reply.error });
    if (reply.toolCalls?.length) {
      return fauxAssistantMessage(
        reply.toolCalls.map((call) => fauxToolCall(call.name, call.arguments as Parameters<typeof fauxToolCall>[1])),
        { stopReason: "toolUse" },
      );
    }
    return fauxAssistantMessage(reply.text ?? "done");
  };
  faux.setResponses([step]);
  pi.registerProvider(faux.provider);
}
