/**
 * @module console/pages/webhook
 * The account's webhook signing secret: reveal it, copy it, rotate it.
 */
import { useState } from "preact/hooks";
import { api } from "../api.ts";
import { CopyButton, Notice, Page, useAction, useLoad, When } from "../ui.tsx";

interface WebhookSecret {
  secret: string;
  created_at?: string | null;
  rotated_at?: string | null;
}

export function WebhookPage() {
  const secret = useLoad(() => api<WebhookSecret>("/v1/account/webhook-secret"), []);
  const [shown, setShown] = useState(false);
  const rotate = useAction();
  const value = secret.data?.secret ?? "";
  return (
    <Page title="Webhook secret">
      <p>
        Video tasks submitted with a <code>webhook_url</code> are delivered signed with this secret.
        Check the signature before trusting a delivery.
      </p>
      <div class="card">
        <Notice error={secret.error ?? rotate.error} done={rotate.done} />
        <div class="secret-row">
          <code data-testid="webhook-secret">
            {value ? (shown ? value : `${value.slice(0, 6)}${"•".repeat(24)}`) : "—"}
          </code>
          <button
            type="button"
            class="secondary"
            onClick={() => setShown(!shown)}
            aria-pressed={shown}
          >
            {shown ? "Hide" : "Show"}
          </button>
          {value ? <CopyButton text={value} /> : null}
        </div>
        {secret.data?.rotated_at || secret.data?.created_at ? (
          <p class="muted">
            Since <When at={secret.data.rotated_at ?? secret.data.created_at} />
          </p>
        ) : null}
        <button
          type="button"
          class="danger"
          disabled={rotate.busy}
          onClick={() => {
            if (
              !confirm(
                "Rotate the webhook secret? Deliveries signed with the old one will no longer verify.",
              )
            )
              return;
            void rotate.run(async () => {
              await api("/v1/account/webhook-secret/rotate", { method: "POST" });
              secret.reload();
              setShown(true);
              return "Rotated. Update your receiver with the new secret.";
            });
          }}
        >
          Rotate
        </button>
      </div>
    </Page>
  );
}
