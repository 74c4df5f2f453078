/**
 * @module tasks/task-models
 * The models and routes the video task engine follows tasks with. A task is polled at the route
 * it was submitted to, which a reload may have changed since (another upstream model, another
 * route) or removed with its model: such a task is still followed to its end at that route, and
 * settled at the price it was held at, rather than left queued, its hold taken, until it
 * expires. So every route a task was submitted to is remembered, and every model as it last was;
 * an instance that did not submit the task (scale-out) finds the vendor's route in its catalog.
 */
import type { CatalogModel, ResolvedRoute } from "../catalog/index.ts";
import type { VideoTask } from "../store/index.ts";
import { routeKey, routeOf } from "./video-engine.ts";

export interface TaskModels {
  /** The model: the live catalog's, else as it last was (a reload removed it). */
  get(id: string): CatalogModel | undefined;
  /** The route `task` was submitted to: the live catalog's, else as it was when submitted. */
  routeOf(task: VideoTask): ResolvedRoute | undefined;
  /** Remembers the route a task of `modelId` is being submitted to. */
  remember(modelId: string, route: ResolvedRoute): void;
}

/** What the task models read of the live catalog. */
export interface LiveCatalog {
  get(id: string): CatalogModel | undefined;
  list(): readonly CatalogModel[];
}

/**
 * A route of the live catalog that reaches the vendor `task` was submitted to (its base URL
 * and credential), with the task's upstream model: polling a task needs the vendor, not the
 * route as it was. What an instance that did not submit the task falls back on after a reload
 * changed the route (the submitting instance remembers the route itself, but may be gone).
 */
function sameVendorRoute(task: VideoTask, catalog: LiveCatalog): ResolvedRoute | undefined {
  const own = catalog.get(task.model);
  const models = own ? [own, ...catalog.list().filter((model) => model !== own)] : catalog.list();
  for (const model of models) {
    if (model.endpoint !== "video") continue;
    for (const route of model.resolvedRoutes)
      if (`${route.vendor}:${task.upstreamModel}` === task.route)
        return { ...route, upstreamModel: task.upstreamModel };
  }
  return undefined;
}

export function taskModels(live: () => LiveCatalog): TaskModels {
  const seen = new Map<string, CatalogModel>();
  const routes = new Map<string, ResolvedRoute>();
  const routeId = (modelId: string, key: string) => `${modelId} ${key}`;
  const first = live();
  const get = (id: string) => {
    const model = live().get(id);
    if (model) {
      seen.set(id, model);
      return model;
    }
    return seen.get(id) ?? first.get(id);
  };
  return {
    get,
    routeOf(task) {
      return (
        routeOf(task, get(task.model)) ??
        routes.get(routeId(task.model, task.route)) ??
        sameVendorRoute(task, live())
      );
    },
    remember(modelId, route) {
      routes.set(routeId(modelId, routeKey(route)), route);
    },
  };
}
