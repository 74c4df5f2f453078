/**
 * @module console/admin/usage
 * Usage across every account (`/v1/admin/usage`), optionally for one account.
 */

import { Page } from "../ui.tsx";
import { UsageView } from "../usage-view.tsx";

export function AdminUsagePage() {
  return (
    <Page title="Usage across accounts">
      <UsageView path="/v1/admin/usage" groups={["day", "model", "account"]} admin />
    </Page>
  );
}
