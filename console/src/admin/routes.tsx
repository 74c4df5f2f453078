/**
 * @module console/admin/routes
 * Each model's routes to vendors and their health (circuit state, failures, retry time).
 * Read defensively: fields a gateway does not report show as a dash.
 */
import { api } from "../api.ts";
import type { List } from "../types.ts";
import { Badge, Empty, Notice, Page, useLoad, When } from "../ui.tsx";

interface RouteHealth {
  id?: string;
  vendor?: string;
  upstream_model?: string;
  state?: string;
  consecutive_failures?: number;
  last_failure?: string | { at?: string; message?: string; code?: string } | null;
  retry_at?: string | number | null;
}

interface ModelRoutes {
  model: string;
  routes?: RouteHealth[];
}

function stateTone(state: string | undefined): "ok" | "warn" | "bad" | "info" {
  if (state === "closed") return "ok";
  if (state === "half_open") return "warn";
  if (state === "open") return "bad";
  return "info";
}

function failureText(failure: RouteHealth["last_failure"]): string {
  if (!failure) return "—";
  if (typeof failure === "string") return failure;
  return [failure.code, failure.message].filter(Boolean).join(": ") || "—";
}

export function AdminRoutesPage() {
  const routes = useLoad(() => api<List<ModelRoutes>>("/v1/admin/routes"), []);
  const rows = (routes.data?.data ?? []).flatMap((entry) =>
    (Array.isArray(entry.routes) ? entry.routes : []).map((route, index) => ({
      model: entry.model,
      route,
      index,
    })),
  );
  return (
    <Page
      title="Routes"
      actions={
        <button type="button" class="secondary" onClick={routes.reload}>
          Refresh
        </button>
      }
    >
      <Notice error={routes.error} />
      {rows.length === 0 && !routes.loading ? (
        <Empty>No routes reported.</Empty>
      ) : (
        <div class="table-wrap">
          <table>
            <caption class="sr-only">Routes and their health</caption>
            <thead>
              <tr>
                <th scope="col">Model</th>
                <th scope="col">Vendor</th>
                <th scope="col">Upstream model</th>
                <th scope="col">State</th>
                <th scope="col" class="num">
                  Failures in a row
                </th>
                <th scope="col">Last failure</th>
                <th scope="col">Retry at</th>
              </tr>
            </thead>
            <tbody>
              {rows.map(({ model, route, index }) => (
                <tr key={`${model}-${route.id ?? index}`}>
                  <td>
                    <code>{model}</code>
                  </td>
                  <td>{route.vendor ?? "—"}</td>
                  <td>{route.upstream_model ?? "—"}</td>
                  <td>
                    <Badge tone={stateTone(route.state)}>{route.state ?? "unknown"}</Badge>
                  </td>
                  <td class="num">{route.consecutive_failures ?? "—"}</td>
                  <td>{failureText(route.last_failure)}</td>
                  <td>
                    <When at={route.retry_at ?? null} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </Page>
  );
}
