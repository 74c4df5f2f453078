/**
 * @module console/pages/models
 * The model catalog the account can use: search, filters (modality, vendor, price) and each
 * model's prices in their own units (per 1M tokens, per image, per video second, …).
 */
import { useMemo, useState } from "preact/hooks";
import { api } from "../api.ts";
import { formatMicros } from "../money.ts";
import type { List, Model } from "../types.ts";
import { Badge, Empty, Field, Input, Notice, Page, useLoad } from "../ui.tsx";

const UNIT_LABELS: Record<string, string> = {
  per_1m_tokens: "per 1M tokens",
  per_image: "per image",
  per_video_second: "per video second",
  per_10k_characters: "per 10k characters",
  per_1k_characters: "per 1k characters",
  per_request: "per request",
  per_minute: "per minute",
};

/** Each price of a model as "input 1.60 USD per 1M tokens", from its integer micro-USD. */
export function priceLines(pricing: Record<string, unknown>): string[] {
  const lines: string[] = [];
  for (const [unit, value] of Object.entries(pricing)) {
    const unitLabel = UNIT_LABELS[unit] ?? unit.replace(/_/g, " ");
    if (typeof value === "number" && Number.isSafeInteger(value)) {
      lines.push(`${formatMicros(value)} ${unitLabel}`);
    } else if (value && typeof value === "object") {
      for (const [part, amount] of Object.entries(value as Record<string, unknown>)) {
        if (typeof amount === "number" && Number.isSafeInteger(amount))
          lines.push(`${part.replace(/_/g, " ")} ${formatMicros(amount)} ${unitLabel}`);
      }
    }
  }
  return lines;
}

/** The lowest price among a model's prices, to sort and filter by. */
function lowestPrice(pricing: Record<string, unknown>): number {
  const amounts: number[] = [];
  for (const value of Object.values(pricing)) {
    if (typeof value === "number") amounts.push(value);
    else if (value && typeof value === "object")
      for (const amount of Object.values(value as Record<string, unknown>))
        if (typeof amount === "number") amounts.push(amount);
  }
  return amounts.length ? Math.min(...amounts) : 0;
}

const MODALITIES: Record<string, string> = {
  chat: "Chat",
  "image-generation": "Image generation",
  "image-edit": "Image editing",
  video: "Video",
  embedding: "Embeddings",
  speech: "Speech",
};

export function ModelsPage() {
  const models = useLoad(() => api<List<Model>>("/v1/models"), []);
  const [search, setSearch] = useState("");
  const [modality, setModality] = useState("");
  const [vendor, setVendor] = useState("");
  const [maxPrice, setMaxPrice] = useState("");
  const all = models.data?.data ?? [];
  const vendors = useMemo(() => [...new Set(all.map((model) => model.owned_by))].sort(), [all]);
  const limit = maxPrice.trim() === "" ? undefined : Number(maxPrice) * 1_000_000;
  const needle = search.trim().toLowerCase();
  const shown = all.filter(
    (model) =>
      (!needle ||
        `${model.id} ${model.display_name} ${model.family}`.toLowerCase().includes(needle)) &&
      (!modality || model.endpoint === modality) &&
      (!vendor || model.owned_by === vendor) &&
      (limit === undefined || lowestPrice(model.pricing) <= limit),
  );
  return (
    <Page title="Models">
      <form
        class="card form inline-form"
        aria-label="Filter models"
        onSubmit={(event) => event.preventDefault()}
      >
        <Field id="model-search" label="Search">
          <Input
            id="model-search"
            type="search"
            value={search}
            onValue={setSearch}
            placeholder="id or name"
          />
        </Field>
        <Field id="model-modality" label="Modality">
          <select
            id="model-modality"
            value={modality}
            onChange={(event) => setModality(event.currentTarget.value)}
          >
            <option value="">All</option>
            {Object.entries(MODALITIES).map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </Field>
        <Field id="model-vendor" label="Vendor">
          <select
            id="model-vendor"
            value={vendor}
            onChange={(event) => setVendor(event.currentTarget.value)}
          >
            <option value="">All</option>
            {vendors.map((name) => (
              <option key={name} value={name}>
                {name}
              </option>
            ))}
          </select>
        </Field>
        <Field id="model-price" label="Lowest price at most (USD)">
          <Input
            id="model-price"
            type="number"
            min={0}
            step="0.01"
            value={maxPrice}
            onValue={setMaxPrice}
          />
        </Field>
      </form>
      <Notice error={models.error} />
      <p class="muted" aria-live="polite">
        {models.loading ? "Loading…" : `${shown.length} of ${all.length} models`}
      </p>
      {shown.length === 0 && !models.loading ? (
        <Empty>No model matches.</Empty>
      ) : (
        <div class="table-wrap">
          <table>
            <caption class="sr-only">Models</caption>
            <thead>
              <tr>
                <th scope="col">Model</th>
                <th scope="col">Modality</th>
                <th scope="col">Vendor</th>
                <th scope="col">Pricing</th>
                <th scope="col">Status</th>
              </tr>
            </thead>
            <tbody>
              {shown.map((model) => (
                <tr key={model.id}>
                  <td>
                    <strong>{model.display_name}</strong>
                    <br />
                    <code>{model.id}</code>
                  </td>
                  <td>{MODALITIES[model.endpoint] ?? model.endpoint}</td>
                  <td>{model.owned_by}</td>
                  <td>
                    <ul class="plain">
                      {priceLines(model.pricing).map((line) => (
                        <li key={line}>{line}</li>
                      ))}
                    </ul>
                  </td>
                  <td>
                    {model.available ? (
                      <Badge tone="ok">available</Badge>
                    ) : (
                      <Badge tone="warn">not configured</Badge>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </Page>
  );
}
