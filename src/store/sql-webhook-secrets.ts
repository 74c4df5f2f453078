/**
 * @module store/sql-webhook-secrets
 * Each account's webhook signing secret (video tasks' and budget alerts' events are signed with
 * it): made on first use (the first writer's stands when two race), and rotated, with an audit
 * event that records the rotation but never the secret.
 */
import type { Kysely } from "kysely";
import type { Database } from "./schema.ts";
import { auditInsert } from "./sql-audit.ts";
import type { TaskStore } from "./task-types.ts";
import type { TransactionRunner } from "./transactions.ts";

export function sqlWebhookSecrets(
  db: Kysely<Database>,
  transactions: TransactionRunner,
): Pick<TaskStore, "webhookSecret" | "rotateWebhookSecret"> {
  return {
    async webhookSecret(accountId, create) {
      const row = await db
        .selectFrom("webhook_secrets")
        .select("secret")
        .where("account_id", "=", accountId)
        .executeTakeFirst();
      if (row) return row.secret;
      const secret = create();
      await db
        .insertInto("webhook_secrets")
        .values({ account_id: accountId, secret, created_at: Date.now() })
        .onConflict((conflict) => conflict.column("account_id").doNothing())
        .execute();
      const stored = await db
        .selectFrom("webhook_secrets")
        .select("secret")
        .where("account_id", "=", accountId)
        .executeTakeFirstOrThrow();
      return stored.secret;
    },

    async rotateWebhookSecret(accountId, secret, audit) {
      const at = Date.now();
      const upsert = db
        .insertInto("webhook_secrets")
        .values({ account_id: accountId, secret, created_at: at })
        .onConflict((conflict) =>
          conflict.column("account_id").doUpdateSet({ secret, created_at: at }),
        );
      if (!audit) await upsert.execute();
      else {
        await transactions.run(function* () {
          yield upsert.compile();
          // The secret itself is never in the trail: only that it changed, and when.
          yield auditInsert(
            db,
            {
              ...audit,
              action: "webhook_secret.rotate",
              target: { type: "webhook_secret", id: accountId },
              before: null,
              after: { rotated_at: at },
            },
            at,
          );
        });
      }
      return secret;
    },
  };
}
