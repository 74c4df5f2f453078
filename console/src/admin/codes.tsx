/**
 * @module console/admin/codes
 * Credit codes: create a batch (amount, count, note; the codes shown once), list and revoke.
 */
import { useState } from "preact/hooks";
import { api } from "../api.ts";
import { parseAmount } from "../money.ts";
import type { List } from "../types.ts";
import {
  Badge,
  CopyButton,
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

interface CreditCode {
  id: string;
  code?: string;
  prefix: string;
  amount_micros: number;
  status: string;
  note?: string | null;
  created_at?: string;
  redeemed_at?: string | null;
  redeemed_by?: string | null;
}

export function AdminCodesPage() {
  // Newest first, 100 a page; "Load more" follows the cursor to the older ones.
  const [rows, setRows] = useState<CreditCode[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [hasMore, setHasMore] = useState(false);
  const codes = useLoad(async () => {
    const page = await api<List<CreditCode>>("/v1/admin/credit-codes", { query: { limit: 100 } });
    setRows(page.data);
    setCursor(page.next_cursor ?? null);
    setHasMore(Boolean(page.has_more && page.next_cursor));
    return page;
  }, []);
  const more = useAction();
  const loadMore = () =>
    void more.run(async () => {
      const page = await api<List<CreditCode>>("/v1/admin/credit-codes", {
        query: { limit: 100, cursor },
      });
      setRows((known) => [...known, ...page.data]);
      setCursor(page.next_cursor ?? null);
      setHasMore(Boolean(page.has_more && page.next_cursor));
    });
  const [amount, setAmount] = useState("");
  const [count, setCount] = useState("1");
  const [note, setNote] = useState("");
  const [created, setCreated] = useState<CreditCode[]>([]);
  const create = useAction();
  const revoke = useAction();
  const micros = parseAmount(amount);
  return (
    <Page title="Credit codes">
      <form
        class="card form inline-form"
        aria-labelledby="codes-title"
        onSubmit={(event) => {
          event.preventDefault();
          if (micros === undefined || micros <= 0n) return;
          void create.run(async () => {
            const body = await api<List<CreditCode>>("/v1/admin/credit-codes", {
              json: {
                amount_micros: Number(micros),
                count: Number.parseInt(count, 10) || 1,
                note: note.trim() || undefined,
              },
            });
            setCreated(body.data);
            codes.reload();
            return `Created ${body.data.length} code(s).`;
          });
        }}
      >
        <h2 id="codes-title">Create codes</h2>
        <Field id="code-amount" label="Amount each (USD)">
          <Input id="code-amount" inputMode="decimal" value={amount} onValue={setAmount} required />
        </Field>
        <Field id="code-count" label="How many">
          <Input id="code-count" type="number" min={1} max={100} value={count} onValue={setCount} />
        </Field>
        <Field id="code-note" label="Note">
          <Input id="code-note" value={note} onValue={setNote} maxLength={200} />
        </Field>
        <button type="submit" disabled={create.busy || micros === undefined || micros <= 0n}>
          Create
        </button>
        <Notice error={create.error} done={create.done} />
      </form>
      {created.length ? (
        <div class="secret" role="status">
          <p>
            <strong>New codes.</strong> They are shown only now.
          </p>
          <ul class="plain">
            {created.map((code) => (
              <li key={code.id} class="secret-row">
                <code>{code.code}</code> <Money micros={code.amount_micros} />
              </li>
            ))}
          </ul>
          <CopyButton text={created.map((code) => code.code).join("\n")} label="Copy all" />
        </div>
      ) : null}
      <h2>Codes</h2>
      <Notice error={codes.error ?? more.error} />
      <Notice error={revoke.error} done={revoke.done} focus />
      {rows.length === 0 && !codes.loading ? (
        <Empty>No credit codes yet.</Empty>
      ) : (
        <div class="table-wrap">
          <table>
            <caption class="sr-only">Credit codes</caption>
            <thead>
              <tr>
                <th scope="col">Code</th>
                <th scope="col" class="num">
                  Amount
                </th>
                <th scope="col">Status</th>
                <th scope="col">Note</th>
                <th scope="col">Created</th>
                <th scope="col">
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((code) => (
                <tr key={code.id}>
                  <td>
                    <code>{code.prefix}</code>
                  </td>
                  <td class="num">
                    <Money micros={code.amount_micros} />
                  </td>
                  <td>
                    <Badge
                      tone={
                        code.status === "active"
                          ? "ok"
                          : code.status === "redeemed"
                            ? "info"
                            : "bad"
                      }
                    >
                      {code.status}
                    </Badge>
                  </td>
                  <td>{code.note ?? ""}</td>
                  <td>
                    <When at={code.created_at} />
                  </td>
                  <td>
                    {code.status === "active" ? (
                      <button
                        type="button"
                        class="danger small"
                        aria-label={`Revoke code ${code.prefix}`}
                        disabled={revoke.busy}
                        onClick={() =>
                          void revoke.run(async () => {
                            const revoked = await api<CreditCode>(
                              `/v1/admin/credit-codes/${encodeURIComponent(code.id)}/revoke`,
                              { method: "POST" },
                            );
                            // In place: a reload would drop the pages "Load more" added.
                            setRows((known) =>
                              known.map((row) => (row.id === code.id ? revoked : row)),
                            );
                            return `Revoked ${code.prefix}.`;
                          })
                        }
                      >
                        Revoke
                      </button>
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <MoreButton hasMore={hasMore} busy={more.busy} onMore={loadMore} />
    </Page>
  );
}
