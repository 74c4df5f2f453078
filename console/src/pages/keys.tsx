/**
 * @module console/pages/keys
 * The account's API keys: create one (name, model allowlist, limits, expiry; the secret shown
 * once with a copy button), list them, revoke one.
 */
import { useState } from "preact/hooks";
import { api, apiAll } from "../api.ts";
import { forgetKey, rememberKey } from "../state.ts";
import type { ApiKey, List, Model } from "../types.ts";
import {
  Badge,
  Empty,
  Field,
  Input,
  Notice,
  Page,
  SecretOnce,
  useAction,
  useLoad,
  When,
} from "../ui.tsx";

function optionalInteger(text: string): number | null {
  return text.trim() === "" ? null : Number.parseInt(text, 10);
}

function CreateKeyForm(props: { onCreated: (key: ApiKey) => void }) {
  const [name, setName] = useState("");
  const [models, setModels] = useState("");
  const [rpm, setRpm] = useState("");
  const [tpm, setTpm] = useState("");
  const [concurrency, setConcurrency] = useState("");
  const [expires, setExpires] = useState("");
  const action = useAction();
  const catalog = useLoad(() => api<List<Model>>("/v1/models"), []);
  return (
    <form
      class="card form grid-form"
      aria-labelledby="create-key-title"
      onSubmit={(event) => {
        event.preventDefault();
        void action.run(async () => {
          const created = await api<ApiKey>("/v1/account/keys", {
            json: {
              name: name.trim() || "default",
              models: models
                .split(",")
                .map((model) => model.trim())
                .filter(Boolean),
              rpm: optionalInteger(rpm),
              tpm: optionalInteger(tpm),
              concurrency: optionalInteger(concurrency),
              expires_at: expires ? new Date(expires).toISOString() : null,
            },
          });
          props.onCreated(created);
          setName("");
          setModels("");
        });
      }}
    >
      <h2 id="create-key-title">Create a key</h2>
      <Field id="key-name" label="Name">
        <Input id="key-name" value={name} onValue={setName} maxLength={100} placeholder="default" />
      </Field>
      <Field
        id="key-models"
        label="Model allowlist"
        hint="Comma-separated model ids; empty allows every model."
      >
        <Input
          id="key-models"
          value={models}
          onValue={setModels}
          list="model-ids"
          aria-describedby="key-models-hint"
        />
        <datalist id="model-ids">
          {(catalog.data?.data ?? []).map((model) => (
            <option key={model.id} value={model.id} />
          ))}
        </datalist>
      </Field>
      <Field id="key-rpm" label="Requests per minute">
        <Input
          id="key-rpm"
          type="number"
          min={1}
          value={rpm}
          onValue={setRpm}
          placeholder="default"
        />
      </Field>
      <Field id="key-tpm" label="Tokens per minute">
        <Input
          id="key-tpm"
          type="number"
          min={1}
          value={tpm}
          onValue={setTpm}
          placeholder="default"
        />
      </Field>
      <Field id="key-concurrency" label="Concurrent requests">
        <Input
          id="key-concurrency"
          type="number"
          min={1}
          value={concurrency}
          onValue={setConcurrency}
          placeholder="default"
        />
      </Field>
      <Field id="key-expires" label="Expires">
        <Input id="key-expires" type="datetime-local" value={expires} onValue={setExpires} />
      </Field>
      <div class="form-end">
        <Notice error={action.error} />
        <button type="submit" disabled={action.busy}>
          {action.busy ? "Creating…" : "Create key"}
        </button>
      </div>
    </form>
  );
}

export function KeyTable(props: {
  keys: ApiKey[];
  onRevoke: (key: ApiKey) => void;
  busy: boolean;
}) {
  if (props.keys.length === 0) return <Empty>No keys yet.</Empty>;
  return (
    <div class="table-wrap">
      <table>
        <caption class="sr-only">API keys</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Key</th>
            <th scope="col">Models</th>
            <th scope="col">Limits</th>
            <th scope="col">Expires</th>
            <th scope="col">Created</th>
            <th scope="col">Status</th>
            <th scope="col">
              <span class="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {props.keys.map((key) => (
            <tr key={key.id} data-key-id={key.id}>
              <td>{key.name}</td>
              <td>
                <code>{key.prefix}</code>
              </td>
              <td>{key.models.length ? key.models.join(", ") : <span class="muted">all</span>}</td>
              <td class="nowrap">
                {[
                  key.rpm && `${key.rpm} rpm`,
                  key.tpm && `${key.tpm} tpm`,
                  key.concurrency && `${key.concurrency} at once`,
                ]
                  .filter(Boolean)
                  .join(", ") || <span class="muted">defaults</span>}
              </td>
              <td>
                <When at={key.expires_at} />
              </td>
              <td>
                <When at={key.created_at} />
              </td>
              <td>
                {key.revoked ? <Badge tone="bad">revoked</Badge> : <Badge tone="ok">active</Badge>}
              </td>
              <td>
                {key.revoked ? null : (
                  <button
                    type="button"
                    class="danger small"
                    disabled={props.busy}
                    aria-label={`Revoke key ${key.name} (${key.prefix})`}
                    onClick={() => {
                      if (
                        confirm(
                          `Revoke the key "${key.name}" (${key.prefix})? Requests with it will fail.`,
                        )
                      )
                        props.onRevoke(key);
                    }}
                  >
                    Revoke
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function KeysPage() {
  const keys = useLoad(() => apiAll<ApiKey>("/v1/account/keys"), []);
  const [created, setCreated] = useState<ApiKey | undefined>();
  const revoke = useAction();
  return (
    <Page title="API keys">
      <CreateKeyForm
        onCreated={(key) => {
          if (key.key)
            rememberKey({ id: key.id, name: key.name, prefix: key.prefix, secret: key.key });
          setCreated(key);
          keys.reload();
        }}
      />
      {created?.key ? (
        <SecretOnce label={`New key "${created.name}".`} secret={created.key}>
          <p>Until you reload or log out, the playground can use it.</p>
        </SecretOnce>
      ) : null}
      <h2>Your keys</h2>
      <Notice error={keys.error} />
      <Notice error={revoke.error} done={revoke.done} focus />
      <KeyTable
        keys={keys.data?.data ?? []}
        busy={revoke.busy}
        onRevoke={(key) =>
          void revoke.run(async () => {
            await api(`/v1/account/keys/${encodeURIComponent(key.id)}`, { method: "DELETE" });
            forgetKey(key.id);
            keys.reload();
            return `Revoked ${key.name} (${key.prefix}).`;
          })
        }
      />
    </Page>
  );
}
