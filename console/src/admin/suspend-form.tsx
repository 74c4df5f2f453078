/**
 * @module console/admin/suspend-form
 * Suspending an account from the console (with the reason the audit trail records) and lifting
 * a suspension: `POST /v1/admin/accounts/{id}/suspend` and `/unsuspend`.
 */
import { useState } from "preact/hooks";
import { api } from "../api.ts";
import type { Account } from "../types.ts";
import { Field, Input, Notice, useAction } from "../ui.tsx";

const path = (account: Account, action: "suspend" | "unsuspend") =>
  `/v1/admin/accounts/${encodeURIComponent(account.id)}/${action}`;

export function SuspendForm(props: { account: Account; onDone: () => void }) {
  const [reason, setReason] = useState("");
  const action = useAction();
  const valid = reason.trim() !== "";
  return (
    <form
      class="card form"
      aria-labelledby="suspend-title"
      onSubmit={(event) => {
        event.preventDefault();
        if (!valid) return;
        void action.run(async () => {
          await api<Account>(path(props.account, "suspend"), { json: { reason: reason.trim() } });
          setReason("");
          props.onDone();
          return `Suspended ${props.account.email}: its keys and sessions are refused.`;
        });
      }}
    >
      <h2 id="suspend-title">Suspend {props.account.email}</h2>
      <p class="hint">
        Every key and session of the account is refused until it is unsuspended. Nothing is revoked;
        requests under way finish.
      </p>
      <Field
        id="suspend-reason"
        label="Reason"
        hint="Recorded on the account and in the audit trail."
      >
        <Input
          id="suspend-reason"
          value={reason}
          onValue={setReason}
          required
          aria-describedby="suspend-reason-hint"
        />
      </Field>
      <button type="submit" class="danger" disabled={!valid || action.busy}>
        {action.busy ? "Suspending…" : "Suspend account"}
      </button>
      <Notice error={action.error} done={action.done} />
    </form>
  );
}

/** The row's button for a suspended account: lifts the suspension after a confirmation. */
export function UnsuspendButton(props: {
  account: Account;
  onDone: (message: string) => void;
  onError: (message: string) => void;
}) {
  const action = useAction();
  return (
    <button
      type="button"
      class="small secondary"
      disabled={action.busy}
      aria-label={`Unsuspend ${props.account.email}`}
      onClick={() => {
        if (!confirm(`Unsuspend ${props.account.email}? Its keys and sessions work again at once.`))
          return;
        void action.run(async () => {
          try {
            await api<Account>(path(props.account, "unsuspend"), { method: "POST" });
            props.onDone(`Unsuspended ${props.account.email}.`);
          } catch (failure) {
            props.onError(failure instanceof Error ? failure.message : String(failure));
          }
        });
      }}
    >
      Unsuspend
    </button>
  );
}
