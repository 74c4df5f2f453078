/**
 * @module console/admin/errors
 * Recent failed requests across accounts: the newest usage records whose status is not
 * `succeeded` (failed, aborted, interrupted), from `/v1/admin/usage`.
 */
import { api } from "../api.ts";
import type { List, UsageRecord } from "../types.ts";
import { Notice, Page, useLoad } from "../ui.tsx";
import { UsageRecordsTable } from "../usage-view.tsx";

export function AdminErrorsPage() {
  const records = useLoad(
    () => api<List<UsageRecord>>("/v1/admin/usage", { query: { limit: 500 } }),
    [],
  );
  const failed = (records.data?.data ?? []).filter((record) => record.status !== "succeeded");
  return (
    <Page
      title="Recent errors"
      actions={
        <button type="button" class="secondary" onClick={records.reload}>
          Refresh
        </button>
      }
    >
      <p class="muted">
        Requests among the newest 500 that did not succeed: failed upstream, aborted by the client
        or interrupted. Logs hold the details (look up the request id).
      </p>
      <Notice error={records.error} />
      <UsageRecordsTable
        records={failed}
        showAccount
        caption="Recent requests that did not succeed"
      />
    </Page>
  );
}
