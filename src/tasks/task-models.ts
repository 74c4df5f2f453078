/**
 * @module tasks/task-models
 * The models and routes the video task engine follows tasks with. A task is polled at the route
 * it was submitted to, which a reload may have changed since (another upstream model, another
 * route) or removed with its model: such a task is still followed to its end at that route, and
 * settled at the price it was held at, rather than left queued, its hold taken, until it
 * expires. So every route a task was submitted to is remembered, and every model as it last was.
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

export function taskModels(live: () => { get(id: string): CatalogModel | undefined }): TaskModels {
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
      return routeOf(task, get(task.model)) ?? routes.get(routeId(task.model, task.route));
    },
    remember(modelId, route) {
      routes.set(routeId(modelId, routeKey(route)), route);
    },
  };
}
