/**
 * @module console/pages/balance
 * The balance (with what open requests hold), the ledger's history page by page, and redeeming
 * a credit code.
 */
import { useState } from "preact/hooks";
import { refreshAccount } from "../account.ts";
import { api } from "../api.ts";
import { formatMicros, formatSignedMicros } from "../money.ts";
import type { Balance, LedgerEntry, List } from "../types.ts";
import {
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

interface Redeemed {
  amount_micros: number;
  balance_micros: number;
  currency: string;
  code_prefix: string;
}

function useLedger() {
  const [entries, setEntries] = useState<LedgerEntry[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [hasMore, setHasMore] = useState(false);
  const more = useAction();
  const first = useLoad(async () => {
    const page = await api<List<LedgerEntry>>("/v1/account/ledger", { query: { limit: 25 } });
    setEntries(page.data);
    setCursor(page.next_cursor ?? null);
    setHasMore(Boolean(page.has_more));
    return page;
  }, []);
  const loadMore = () =>
    void more.run(async () => {
      const page = await api<List<LedgerEntry>>("/v1/account/ledger", {
        query: { limit: 25, cursor },
      });
      setEntries((known) => [...known, ...page.data]);
      setCursor(page.next_cursor ?? null);
      setHasMore(Boolean(page.has_more));
    });
  return { entries, hasMore, loadMore, more, first };
}

export function BalancePage() {
  const balance = useLoad(() => api<Balance>("/v1/account/balance"), []);
  const ledger = useLedger();
  const [code, setCode] = useState("");
  const redeem = useAction();
  const currency = balance.data?.currency ?? "USD";
  return (
    <Page title="Balance">
      <div class="stats" aria-busy={balance.loading}>
        <div class="stat">
          <span class="stat-label">Balance</span>
          <span class="stat-value" data-testid="balance">
            {balance.data ? formatMicros(balance.data.balance_micros, currency) : "—"}
          </span>
        </div>
        <div class="stat">
          <span class="stat-label">Held by requests in flight</span>
          <span class="stat-value">
            {balance.data ? formatMicros(balance.data.held_micros, currency) : "—"}
          </span>
        </div>
        <div class="stat">
          <span class="stat-label">Available</span>
          <span class="stat-value">
            {balance.data ? formatMicros(balance.data.available_micros, currency) : "—"}
          </span>
        </div>
      </div>
      <Notice error={balance.error} />

      <form
        class="card form inline-form"
        aria-labelledby="redeem-title"
        onSubmit={(event) => {
          event.preventDefault();
          void redeem.run(async () => {
            const result = await api<Redeemed>("/v1/account/credit-codes/redeem", {
              json: { code: code.trim() },
            });
            setCode("");
            balance.reload();
            ledger.first.reload();
            void refreshAccount();
            return `Redeemed ${result.code_prefix}: ${formatMicros(result.amount_micros, result.currency)} added; balance ${formatMicros(result.balance_micros, result.currency)}.`;
          });
        }}
      >
        <h2 id="redeem-title">Redeem a credit code</h2>
        <Field id="credit-code" label="Credit code">
          <Input
            id="credit-code"
            value={code}
            onValue={setCode}
            required
            autoComplete="off"
            spellcheck={false}
          />
        </Field>
        <button type="submit" disabled={redeem.busy || code.trim() === ""}>
          {redeem.busy ? "Redeeming…" : "Redeem"}
        </button>
        <Notice error={redeem.error} done={redeem.done} />
      </form>

      <h2>History</h2>
      <Notice error={ledger.first.error ?? ledger.more.error} />
      {ledger.entries.length === 0 && !ledger.first.loading ? (
        <Empty>No ledger entries yet.</Empty>
      ) : (
        <div class="table-wrap">
          <table>
            <caption class="sr-only">Ledger entries, newest first</caption>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Kind</th>
                <th scope="col" class="num">
                  Amount
                </th>
                <th scope="col" class="num">
                  Balance after
                </th>
                <th scope="col">Reason</th>
              </tr>
            </thead>
            <tbody>
              {ledger.entries.map((entry) => (
                <tr key={entry.id}>
                  <td>
                    <When at={entry.created_at} />
                  </td>
                  <td>{entry.kind}</td>
                  <td class="num">{formatSignedMicros(entry.amount_micros, currency)}</td>
                  <td class="num">
                    {entry.balance_after_micros === undefined ? (
                      "—"
                    ) : (
                      <Money micros={entry.balance_after_micros} currency={currency} />
                    )}
                  </td>
                  <td>{entry.reason ?? ""}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <MoreButton hasMore={ledger.hasMore} busy={ledger.more.busy} onMore={ledger.loadMore} />
    </Page>
  );
}
