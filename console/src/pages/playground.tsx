/**
 * @module console/pages/playground
 * Try models with the user's own key: chat (streamed), images, speech (an audio player) and
 * embeddings. The key is picked from those created in this page's lifetime or pasted, and is
 * held in memory only. Each answer shows what it cost (`x-switchyard-cost-micros`, or the
 * `cost_micros` of a stream's usage chunk) and whether the sandbox answered it.
 */
import { useState } from "preact/hooks";
import { refreshAccount } from "../account.ts";
import { api, modelCall } from "../api.ts";
import { type SessionKey, sessionKeys, useStore } from "../state.ts";
import type { List, Model } from "../types.ts";
import { Badge, Field, Input, Money, Notice, Page, useAction, useLoad } from "../ui.tsx";

type Mode = "chat" | "image" | "speech" | "embedding";
const MODES: { mode: Mode; label: string; endpoint: string }[] = [
  { mode: "chat", label: "Chat", endpoint: "chat" },
  { mode: "image", label: "Images", endpoint: "image-generation" },
  { mode: "speech", label: "Speech", endpoint: "speech" },
  { mode: "embedding", label: "Embeddings", endpoint: "embedding" },
];

interface Outcome {
  costMicros?: number | undefined;
  sandbox: boolean;
  text?: string;
  imageUrl?: string;
  audioUrl?: string;
  vector?: { dimensions: number; head: number[] };
}

function costHeader(response: Response): number | undefined {
  const value = response.headers.get("x-switchyard-cost-micros");
  return value && /^\d+$/.test(value) ? Number(value) : undefined;
}

/** Reads a chat completion stream, calling `onText` with the text so far. */
async function readChatStream(response: Response, onText: (text: string) => void) {
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  let text = "";
  let cost: number | undefined;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    buffer += value;
    let newline = buffer.indexOf("\n");
    while (newline >= 0) {
      const line = buffer.slice(0, newline).trim();
      buffer = buffer.slice(newline + 1);
      newline = buffer.indexOf("\n");
      if (!line.startsWith("data:")) continue;
      const data = line.slice(5).trim();
      if (data === "[DONE]") continue;
      const chunk = JSON.parse(data) as {
        choices?: { delta?: { content?: string | null } }[];
        usage?: { cost_micros?: number } | null;
        cost_micros?: number;
        error?: { message?: string };
      };
      if (chunk.error) throw new Error(chunk.error.message ?? "the stream failed");
      const delta = chunk.choices?.[0]?.delta?.content;
      if (delta) {
        text += delta;
        onText(text);
      }
      const chunkCost = chunk.usage?.cost_micros ?? chunk.cost_micros;
      if (typeof chunkCost === "number") cost = chunkCost;
    }
  }
  return { text, cost };
}

/** The key picker; `value` is the key in use (the newest session key until one is chosen). */
function KeyPicker(props: {
  value: string;
  keys: readonly SessionKey[];
  onValue: (value: string) => void;
}) {
  const { keys } = props;
  const [pasted, setPasted] = useState("");
  const chosen = keys.find((key) => key.secret === props.value);
  return (
    <div class="inline-form">
      <Field
        id="pg-key"
        label="API key"
        hint="Keys created since this page loaded; kept in memory only."
      >
        <select
          id="pg-key"
          value={chosen?.id ?? ""}
          onChange={(event) =>
            props.onValue(keys.find((key) => key.id === event.currentTarget.value)?.secret ?? "")
          }
          aria-describedby="pg-key-hint"
        >
          <option value="">
            {keys.length ? "Choose a key" : "No key created in this session"}
          </option>
          {keys.map((key) => (
            <option key={key.id} value={key.id}>
              {key.name} ({key.prefix})
            </option>
          ))}
        </select>
      </Field>
      <Field id="pg-paste" label="…or paste a key">
        <Input
          id="pg-paste"
          type="password"
          autoComplete="off"
          placeholder="sk-…"
          value={pasted}
          onValue={(value) => {
            setPasted(value);
            props.onValue(value.trim());
          }}
        />
      </Field>
    </div>
  );
}

export function PlaygroundPage() {
  // The key and the model are what the user picked, else a default derived at each render, never
  // a default written back by an effect: an effect can run after the user's own pick (a slow
  // browser) and overwrite it, and the call would go out with something not on the screen.
  const sessionKeyList = useStore(sessionKeys);
  const [pickedKey, setKey] = useState("");
  const key = pickedKey || (sessionKeyList[sessionKeyList.length - 1]?.secret ?? "");
  const [mode, setMode] = useState<Mode>("chat");
  const [pickedModel, setModel] = useState("");
  const [prompt, setPrompt] = useState("");
  const [voice, setVoice] = useState("alloy");
  const [outcome, setOutcome] = useState<Outcome | undefined>();
  const [streamed, setStreamed] = useState("");
  const action = useAction();
  const catalog = useLoad(() => api<List<Model>>("/v1/models"), []);
  const endpoint = MODES.find((entry) => entry.mode === mode)!.endpoint;
  const models = (catalog.data?.data ?? []).filter(
    (entry) => entry.endpoint === endpoint && entry.available,
  );
  const model = models.some((entry) => entry.id === pickedModel)
    ? pickedModel
    : (models[0]?.id ?? "");

  const send = () =>
    void action.run(async () => {
      await call();
      // the balance in the top bar
      void refreshAccount().catch(() => {});
    });
  const call = () =>
    (async () => {
      if (!key.startsWith("sk-")) throw new Error("Choose or paste an API key (sk-…) first.");
      setOutcome(undefined);
      setStreamed("");
      if (mode === "chat") {
        const response = await modelCall("/v1/chat/completions", key, {
          model,
          stream: true,
          stream_options: { include_usage: true },
          messages: [{ role: "user", content: prompt }],
        });
        const sandbox = response.headers.get("x-switchyard-sandbox") === "true";
        const { text, cost } = await readChatStream(response, setStreamed);
        setOutcome({ text, sandbox, costMicros: cost ?? costHeader(response) });
      } else if (mode === "image") {
        const response = await modelCall("/v1/images/generations", key, { model, prompt, n: 1 });
        const body = (await response.json()) as { data?: { url?: string; b64_json?: string }[] };
        const first = body.data?.[0];
        const imageUrl =
          first?.url ?? (first?.b64_json ? `data:image/png;base64,${first.b64_json}` : undefined);
        setOutcome({
          sandbox: response.headers.get("x-switchyard-sandbox") === "true",
          costMicros: costHeader(response),
          ...(imageUrl ? { imageUrl } : {}),
        });
      } else if (mode === "speech") {
        const response = await modelCall("/v1/audio/speech", key, { model, input: prompt, voice });
        const audioUrl = URL.createObjectURL(await response.blob());
        setOutcome({
          audioUrl,
          sandbox: response.headers.get("x-switchyard-sandbox") === "true",
          costMicros: costHeader(response),
        });
      } else {
        const response = await modelCall("/v1/embeddings", key, { model, input: prompt });
        const body = (await response.json()) as { data?: { embedding?: number[] }[] };
        const embedding = body.data?.[0]?.embedding ?? [];
        setOutcome({
          vector: { dimensions: embedding.length, head: embedding.slice(0, 8) },
          sandbox: response.headers.get("x-switchyard-sandbox") === "true",
          costMicros: costHeader(response),
        });
      }
    })();

  return (
    <Page title="Playground">
      <div class="card">
        <KeyPicker value={key} keys={sessionKeyList} onValue={setKey} />
      </div>
      <div class="tabs" role="tablist" aria-label="What to try">
        {MODES.map((entry) => (
          <button
            key={entry.mode}
            type="button"
            role="tab"
            aria-selected={mode === entry.mode}
            class={mode === entry.mode ? "tab active" : "tab"}
            onClick={() => {
              setMode(entry.mode);
              setOutcome(undefined);
              setStreamed("");
            }}
          >
            {entry.label}
          </button>
        ))}
      </div>
      <form
        class="card form"
        role="tabpanel"
        aria-label={MODES.find((entry) => entry.mode === mode)!.label}
        onSubmit={(event) => {
          event.preventDefault();
          send();
        }}
      >
        <div class="inline-form">
          <Field id="pg-model" label="Model">
            <select
              id="pg-model"
              value={model}
              onChange={(event) => setModel(event.currentTarget.value)}
            >
              {models.map((entry) => (
                <option key={entry.id} value={entry.id}>
                  {entry.display_name} ({entry.id})
                </option>
              ))}
            </select>
          </Field>
          {mode === "speech" ? (
            <Field id="pg-voice" label="Voice">
              <Input id="pg-voice" value={voice} onValue={setVoice} />
            </Field>
          ) : null}
        </div>
        <Field
          id="pg-prompt"
          label={mode === "chat" ? "Message" : mode === "image" ? "Prompt" : "Text"}
        >
          <textarea
            id="pg-prompt"
            rows={4}
            required
            value={prompt}
            onInput={(event) => setPrompt(event.currentTarget.value)}
          />
        </Field>
        <button type="submit" disabled={action.busy || !model}>
          {action.busy ? "Running…" : "Send"}
        </button>
        <Notice
          error={
            action.error ??
            (catalog.error
              ? `The models could not be loaded: ${catalog.error}`
              : catalog.data && models.length === 0
                ? "No models are available for this kind of call."
                : undefined)
          }
        />
      </form>
      <section class="card result" aria-live="polite" aria-label="Answer">
        <div class="result-head">
          <h2>Answer</h2>
          {outcome?.sandbox ? <Badge tone="warn">sandbox</Badge> : null}
          {outcome?.costMicros !== undefined ? (
            <span data-testid="call-cost">
              Cost: <Money micros={outcome.costMicros} />
            </span>
          ) : null}
        </div>
        {mode === "chat" && (streamed || outcome?.text) ? (
          <p class="answer" data-testid="chat-answer">
            {outcome?.text ?? streamed}
          </p>
        ) : null}
        {outcome?.imageUrl ? (
          <img src={outcome.imageUrl} alt={`Generated for: ${prompt}`} class="generated" />
        ) : null}
        {outcome?.audioUrl ? (
          // biome-ignore lint/a11y/useMediaCaption: synthesized speech of the text shown above
          <audio controls src={outcome.audioUrl} />
        ) : null}
        {outcome?.vector ? (
          <p>
            {outcome.vector.dimensions} dimensions: [
            {outcome.vector.head.map((value) => value.toFixed(4)).join(", ")}, …]
          </p>
        ) : null}
        {!outcome && !streamed ? <p class="muted">The answer appears here.</p> : null}
      </section>
    </Page>
  );
}
