/**
 * @module console/admin/keys
 * Operators list the keys of any account (found by email) and revoke them.
 */
import { useState } from "preact/hooks";
import { api, apiAll } from "../api.ts";
import { KeyTable } from "../pages/keys.tsx";
import type { Account, ApiKey } from "../types.ts";
import { Empty, Notice, Page, useAction, useLoad } from "../ui.tsx";
import { AccountSearchForm, useAccountSearch } from "./accounts.tsx";

function AccountKeys(props: { account: Account }) {
  const keys = useLoad(
    () => apiAll<ApiKey>(`/v1/admin/accounts/${encodeURIComponent(props.account.id)}/keys`),
    [props.account.id],
  );
  const revoke = useAction();
  return (
    <>
      <h2>Keys of {props.account.email}</h2>
      <Notice error={keys.error} />
      <Notice error={revoke.error} done={revoke.done} focus />
      <KeyTable
        keys={keys.data?.data ?? []}
        busy={revoke.busy}
        onRevoke={(key) =>
          void revoke.run(async () => {
            await api(`/v1/admin/keys/${encodeURIComponent(key.id)}/revoke`, { method: "POST" });
            keys.reload();
            return `Revoked ${key.name} (${key.prefix}).`;
          })
        }
      />
    </>
  );
}

export function AdminKeysPage() {
  const [email, setEmail] = useState("");
  const [selected, setSelected] = useState<Account | undefined>();
  const search = useAccountSearch(email);
  return (
    <Page title="Keys">
      <AccountSearchForm
        id="keys-email"
        label="Account email"
        button="Find"
        onSearch={(typed) => {
          setEmail(typed);
          setSelected(undefined);
        }}
      />
      <Notice error={search.first.error} />
      {search.rows.length === 0 && !search.first.loading ? (
        <Empty>No account matches.</Empty>
      ) : null}
      <ul class="chips" aria-label="Accounts">
        {search.rows.slice(0, 20).map((account) => (
          <li key={account.id}>
            <button
              type="button"
              class={selected?.id === account.id ? "chip active" : "chip"}
              aria-pressed={selected?.id === account.id}
              onClick={() => setSelected(account)}
            >
              {account.email}
            </button>
          </li>
        ))}
      </ul>
      {selected ? (
        <AccountKeys account={selected} />
      ) : (
        <p class="muted">Pick an account to see its keys.</p>
      )}
    </Page>
  );
}
