/**
 * @module console/pages/usage
 * The account's usage: charts by day, model and key, and the requests with CSV export.
 */

import { Page } from "../ui.tsx";
import { UsageView } from "../usage-view.tsx";

export function UsagePage() {
  return (
    <Page title="Usage">
      <UsageView path="/v1/account/usage" groups={["day", "model", "key"]} />
    </Page>
  );
}
