/**
 * Test-only Pi extension: registers pi-ai's offline faux provider ("faux"/"faux-1") whose every reply
 * is decided by the test process. Each model request posts the transcript to PIUE_TEST_MODEL_URL
 * (a {@link ScriptedModel} server), which answers with a step of the shared script language
 * (examples/lib/model-script.ts). The provider answers any number of turns, prompts and `/reload`.
 */
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { type ModelStep, scriptedFaux } from "../../examples/lib/model-script.ts";

async function askTestProcess(url: string | undefined, messages: unknown[]): Promise<ModelStep> {
  if (!url) return { error: "PIUE_TEST_MODEL_URL is not set: no model server" };
  try {
    const response = await fetch(url, { method: "POST", body: JSON.stringify({ messages }) });
    return (await response.json()) as ModelStep;
  } catch (error) {
    return { error: `model server unreachable: ${(error as Error).message}` };
  }
}

export default function fauxTestModel(pi: ExtensionAPI): void {
  const url = process.env.PIUE_TEST_MODEL_URL;
  // One huge token per block: streaming chunk by chunk would only add events the tests never read.
  // PIUE_FAUX_STREAMING=default keeps pi-ai's own small tokens (the benchmark's isolated mode: a user's
  // model streams, and every streamed event passes Pi's handlers, ours included).
  const streaming = process.env.PIUE_FAUX_STREAMING === "default" ? {} : { tokenSize: 1_000_000 };
  const faux = scriptedFaux((messages) => askTestProcess(url, messages), streaming);
  pi.registerProvider(faux.provider);
}
