/**
 * @module console/admin/accounts
 * Operators find accounts by email and credit or debit one, with a reason, through the ledger;
 * or suspend one and lift its suspension (suspend-form.tsx).
 */
import { useRef, useState } from "preact/hooks";
import { api } from "../api.ts";
import { formatMicros, parseAmount } from "../money.ts";
import type { Account, List } from "../types.ts";
import {
  Badge,
  Empty,
  Field,
  Input,
  Money,
  MoreButton,
  Notice,
  Page,
  useAction,
  useLoad,
  When,
} from "../ui.tsx";
import { SuspendForm, UnsuspendButton } from "./suspend-form.tsx";

export function useAccountSearch(email: string) {
  const [rows, setRows] = useState<Account[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [hasMore, setHasMore] = useState(false);
  const more = useAction();
  const first = useLoad(async () => {
    const page = await api<List<Account>>("/v1/admin/accounts", { query: { email, limit: 50 } });
    setRows(page.data);
    setCursor(page.next_cursor ?? null);
    setHasMore(Boolean(page.has_more && page.next_cursor));
    return page;
  }, [email]);
  const loadMore = () =>
    void more.run(async () => {
      const page = await api<List<Account>>("/v1/admin/accounts", {
        query: { email, limit: 50, cursor },
      });
      setRows((known) => [...known, ...page.data]);
      setCursor(page.next_cursor ?? null);
      setHasMore(Boolean(page.has_more && page.next_cursor));
    });
  return { rows, hasMore, loadMore, more, first };
}

/** A random key; `crypto.randomUUID` needs a secure context, which a plain-HTTP console is not. */
function newIdempotencyKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return `console-${Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("")}`;
}

function CreditForm(props: { account: Account; onDone: () => void }) {
  const [direction, setDirection] = useState<"credit" | "debit">("credit");
  const [amount, setAmount] = useState("");
  const [reason, setReason] = useState("");
  const action = useAction();
  // One idempotency key per intended entry: sending the same direction, amount and reason again
  // (after a timeout or a lost answer) reuses it, so the ledger gets one entry; any change, or
  // a success, starts a new one.
  const intent = useRef<{ signature: string; key: string } | undefined>(undefined);
  const micros = parseAmount(amount);
  const valid = micros !== undefined && micros > 0n && reason.trim() !== "";
  return (
    <form
      class="card form"
      aria-labelledby="credit-title"
      onSubmit={(event) => {
        event.preventDefault();
        if (!valid) return;
        void action.run(async () => {
          const signed = direction === "credit" ? micros : -micros;
          const signature = `${props.account.id} ${signed} ${reason.trim()}`;
          if (intent.current?.signature !== signature)
            intent.current = { signature, key: newIdempotencyKey() };
          const entry = await api<{ balance_micros: number }>(
            `/v1/admin/accounts/${encodeURIComponent(props.account.id)}/credit`,
            {
              json: { amount_micros: Number(signed), reason: reason.trim() },
              idempotencyKey: intent.current.key,
            },
          );
          intent.current = undefined;
          setAmount("");
          setReason("");
          props.onDone();
          return `${direction === "credit" ? "Credited" : "Debited"} ${formatMicros(micros)}; balance now ${formatMicros(entry.balance_micros)}.`;
        });
      }}
    >
      <h2 id="credit-title">Credit or debit {props.account.email}</h2>
      <fieldset class="radio-row">
        <legend>Direction</legend>
        <label>
          <input
            type="radio"
            name="direction"
            checked={direction === "credit"}
            onChange={() => setDirection("credit")}
          />{" "}
          Credit
        </label>
        <label>
          <input
            type="radio"
            name="direction"
            checked={direction === "debit"}
            onChange={() => setDirection("debit")}
          />{" "}
          Debit
        </label>
      </fieldset>
      <Field id="credit-amount" label="Amount (USD)" hint="Up to six decimals, e.g. 12.50">
        <Input
          id="credit-amount"
          inputMode="decimal"
          value={amount}
          onValue={setAmount}
          aria-invalid={amount !== "" && (micros === undefined || micros <= 0n)}
          aria-describedby="credit-amount-hint"
          required
        />
      </Field>
      <Field id="credit-reason" label="Reason" hint="Recorded in the ledger and the audit trail.">
        <Input
          id="credit-reason"
          value={reason}
          onValue={setReason}
          maxLength={500}
          required
          aria-describedby="credit-reason-hint"
        />
      </Field>
      <button type="submit" disabled={!valid || action.busy}>
        {action.busy ? "Saving…" : direction === "credit" ? "Credit account" : "Debit account"}
      </button>
      <Notice error={action.error} done={action.done} />
    </form>
  );
}

/** The email search both admin pages start from: what was typed, sent on submit. */
export function AccountSearchForm(props: {
  id: string;
  label: string;
  button: string;
  placeholder?: string;
  onSearch(email: string): void;
}) {
  const [typed, setTyped] = useState("");
  return (
    <form
      class="card form inline-form"
      aria-label="Search"
      onSubmit={(event) => {
        event.preventDefault();
        props.onSearch(typed.trim());
      }}
    >
      <Field id={props.id} label={props.label}>
        <Input
          id={props.id}
          type="search"
          value={typed}
          onValue={setTyped}
          {...(props.placeholder ? { placeholder: props.placeholder } : {})}
        />
      </Field>
      <button type="submit">{props.button}</button>
    </form>
  );
}

export function AdminAccountsPage() {
  const [email, setEmail] = useState("");
  const [selected, setSelected] = useState<Account | undefined>();
  const [suspending, setSuspending] = useState<Account | undefined>();
  const [rowNotice, setRowNotice] = useState<{ error?: string; done?: string }>({});
  const search = useAccountSearch(email);
  return (
    <Page title="Accounts">
      <AccountSearchForm
        id="account-email"
        label="Email"
        button="Search"
        placeholder="part of an email"
        onSearch={setEmail}
      />
      <Notice error={search.first.error ?? search.more.error} />
      <Notice error={rowNotice.error} done={rowNotice.done} />
      {suspending ? (
        <SuspendForm
          account={suspending}
          onDone={() => {
            search.first.reload();
          }}
        />
      ) : null}
      {selected ? (
        <CreditForm
          account={selected}
          onDone={() => {
            search.first.reload();
          }}
        />
      ) : null}
      {search.rows.length === 0 && !search.first.loading ? (
        <Empty>No account matches.</Empty>
      ) : (
        <div class="table-wrap">
          <table>
            <caption class="sr-only">Accounts</caption>
            <thead>
              <tr>
                <th scope="col">Email</th>
                <th scope="col">Id</th>
                <th scope="col">Role</th>
                <th scope="col" class="num">
                  Balance
                </th>
                <th scope="col">Created</th>
                <th scope="col">
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {search.rows.map((account) => (
                <tr key={account.id} aria-selected={selected?.id === account.id}>
                  <td>{account.email}</td>
                  <td>
                    <code>{account.id}</code>
                  </td>
                  <td>
                    {account.role === "admin" ? <Badge tone="warn">admin</Badge> : "user"}
                    {account.suspended_at ? (
                      <>
                        {" "}
                        <Badge tone="bad">suspended</Badge>
                      </>
                    ) : null}
                  </td>
                  <td class="num">
                    <Money micros={account.balance_micros} />
                  </td>
                  <td>
                    <When at={account.created_at} />
                  </td>
                  <td>
                    <button
                      type="button"
                      class="small secondary"
                      aria-label={`Credit or debit ${account.email}`}
                      onClick={() => {
                        setSuspending(undefined);
                        setSelected(account);
                      }}
                    >
                      Credit / debit
                    </button>{" "}
                    {account.suspended_at ? (
                      <UnsuspendButton
                        account={account}
                        onDone={(done) => {
                          setRowNotice({ done });
                          search.first.reload();
                        }}
                        onError={(error) => setRowNotice({ error })}
                      />
                    ) : (
                      <button
                        type="button"
                        class="small danger"
                        aria-label={`Suspend ${account.email}`}
                        onClick={() => {
                          setSelected(undefined);
                          setSuspending(account);
                        }}
                      >
                        Suspend
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <MoreButton hasMore={search.hasMore} busy={search.more.busy} onMore={search.loadMore} />
    </Page>
  );
}
