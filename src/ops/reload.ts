/**
 * @module ops/reload
 * SIGHUP: reads `switchyard.yaml` and the environment again and applies, in place and without
 * touching a request in flight, what a running process can take: the catalog (files and
 * `catalog.*`), `model_aliases`, `limits.*` and `log_level`. Every other setting that changed is
 * logged as needing a restart and left as it was. A configuration or catalog that does not load
 * changes nothing and is logged as the reason. A reload asked for by a signal or a watched file
 * is recorded in the audit trail (`config.reload`) with the settings before and after.
 */

import type { Logger } from "pino";
import type { Catalog, CatalogData } from "../catalog/index.ts";
import type { Config } from "../config/index.ts";
import { quotaDefaults } from "../core/quota-defaults.ts";
import type { Services } from "../core/services.ts";
import type { AuditOrigin } from "../store/index.ts";

export interface ReloadTarget {
  services: Services;
  /** The catalog data the running catalog was built from. */
  catalogData: CatalogData;
  /** Reads the configuration again (file and environment); throws when it is invalid. */
  readConfig(): Config;
  loadCatalog(config: Config): CatalogData;
  buildCatalog(config: Config, data: CatalogData): Catalog;
  /** Loggers whose level follows `log_level` (the root logger and the HTTP server's). */
  loggers: Logger[];
}

export interface ReloadOutcome {
  /** What was applied, one line per change (`limits.default_rpm: null → 60`). */
  applied: string[];
  /** Settings that changed but take a restart (`server.port`, `database_url`). */
  needsRestart: string[];
}

/**
 * How a process derived the configuration it runs with from the one it read (a `--workers`
 * worker's own `billing.instance_id`), by the derived configuration.
 */
const derivations = new WeakMap<Config, (read: Config) => Config>();

/**
 * `derive(config)`, remembered with the result: a reload of a gateway running with it derives
 * the configuration it reads again the same way, so a setting the process derives itself is not
 * reported as changed (needing a restart) on every reload.
 */
export function deriveConfig(config: Config, derive: (read: Config) => Config): Config {
  const derived = derive(config);
  derivations.set(derived, derive);
  return derived;
}

/** The settings applied by a reload; every other one takes a restart. */
const RELOADABLE = new Set(["catalog", "model_aliases", "limits", "log_level"]);

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
const show = (value: unknown) =>
  value === undefined ? "(none)" : typeof value === "string" ? value : JSON.stringify(value);

function isSection(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Dotted names of the settings (one level into each section) that differ. */
function changedSettings(before: Config, after: Config): string[] {
  const changed: string[] = [];
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
  for (const key of keys) {
    const a = (before as Record<string, unknown>)[key];
    const b = (after as Record<string, unknown>)[key];
    if (isSection(a) && isSection(b) && key !== "model_aliases") {
      for (const inner of new Set([...Object.keys(a), ...Object.keys(b)]))
        if (!same(a[inner], b[inner])) changed.push(`${key}.${inner}`);
    } else if (!same(a, b)) changed.push(key);
  }
  return changed;
}

/** `added a, b; removed c; changed d` for two maps of named entries. */
function describeEntries(
  what: string,
  before: Map<string, unknown>,
  after: Map<string, unknown>,
): string | undefined {
  const added = [...after.keys()].filter((name) => !before.has(name));
  const removed = [...before.keys()].filter((name) => !after.has(name));
  const changed = [...after.keys()].filter(
    (name) => before.has(name) && !same(before.get(name), after.get(name)),
  );
  const parts = [
    added.length > 0 ? `added ${added.join(", ")}` : "",
    removed.length > 0 ? `removed ${removed.join(", ")}` : "",
    changed.length > 0 ? `changed ${changed.join(", ")}` : "",
  ].filter(Boolean);
  return parts.length > 0 ? `${what}: ${parts.join("; ")}` : undefined;
}

function describeCatalog(before: CatalogData, after: CatalogData): string[] {
  const models = (data: CatalogData) => new Map(data.models.map((model) => [model.id, model]));
  const vendors = (data: CatalogData) => new Map(Object.entries(data.vendors));
  return [
    describeEntries("catalog models", models(before), models(after)),
    describeEntries("catalog vendors", vendors(before), vendors(after)),
  ].filter((line): line is string => line !== undefined);
}

function describeAliases(before: Config, after: Config): string[] {
  const line = describeEntries(
    "model_aliases",
    new Map(Object.entries(before.model_aliases)),
    new Map(Object.entries(after.model_aliases)),
  );
  return line ? [line] : [];
}

/** The reloadable settings that changed, by dotted name, as they are in `config`. */
function settingsSnapshot(config: Config, names: string[]): Record<string, unknown> {
  return Object.fromEntries(
    names.map((name) => {
      const [section, key] = name.split(".") as [keyof Config, string | undefined];
      const value =
        key === undefined ? config[section] : (config[section] as Record<string, unknown>)[key];
      return [name, value ?? null];
    }),
  );
}

/** Records a reload in the audit trail; a failure to write it is logged, never thrown. */
function auditReload(
  services: Services,
  origin: AuditOrigin,
  event: { before: Record<string, unknown>; after: Record<string, unknown> },
): void {
  services.store
    .recordAudit({
      ...origin,
      action: "config.reload",
      target: { type: "config", id: null },
      ...event,
    })
    .catch((error: unknown) =>
      services.logger.warn(
        { reason: error instanceof Error ? error.message : String(error) },
        "configuration reload: the audit event could not be written",
      ),
    );
}

export function createReloader(target: ReloadTarget): {
  /** `origin`: who asked (a signal, a watched file); without it nothing is audited. */
  reload(origin?: AuditOrigin): ReloadOutcome | undefined;
} {
  let catalogData = target.catalogData;
  return {
    reload(origin) {
      const { services } = target;
      const logger = services.logger;
      const current = services.config;
      let next: Config;
      let nextData: CatalogData;
      let nextCatalog: Catalog;
      try {
        const read = target.readConfig();
        next = derivations.get(current)?.(read) ?? read;
        // Only the reloadable settings are taken; the rest keep their running values.
        const merged: Config = {
          ...current,
          catalog: next.catalog,
          model_aliases: next.model_aliases,
          limits: next.limits,
          log_level: next.log_level,
        };
        nextData = target.loadCatalog(merged);
        nextCatalog = target.buildCatalog(merged, nextData);
      } catch (error) {
        logger.error(
          { reason: error instanceof Error ? error.message : String(error) },
          "configuration reload failed; the running configuration is unchanged",
        );
        return undefined;
      }
      const changed = changedSettings(current, next);
      const needsRestart = changed.filter((name) => !RELOADABLE.has(name.split(".")[0] ?? ""));
      const applied = [
        ...describeCatalog(catalogData, nextData),
        ...describeAliases(current, next),
        ...changed
          .filter((name) => name.startsWith("limits.") || name === "log_level")
          .map((name) => {
            const [section, key] = name.split(".") as [keyof Config, string | undefined];
            const value = (config: Config) =>
              key === undefined
                ? config[section]
                : (config[section] as Record<string, unknown>)[key];
            return `${name}: ${show(value(current))} → ${show(value(next))}`;
          }),
      ];

      if (origin) {
        // Catalog entries are named, not copied: a vendor's settings may hold a credential.
        const settings = changed.filter(
          (name) => RELOADABLE.has(name.split(".")[0] ?? "") && !name.startsWith("catalog"),
        );
        auditReload(services, origin, {
          before: settingsSnapshot(current, settings),
          after: {
            ...settingsSnapshot(next, settings),
            changes: applied,
            needs_restart: needsRestart,
          },
        });
      }
      services.catalog = nextCatalog;
      catalogData = nextData;
      current.catalog = next.catalog;
      current.model_aliases = next.model_aliases;
      current.limits = next.limits;
      services.quotas.configure?.(quotaDefaults(next.limits));
      if (applied.length > 0) logger.info({ changes: applied }, "configuration reloaded");
      else logger.info("configuration reloaded: nothing changed");
      if (needsRestart.length > 0)
        logger.warn(
          { settings: needsRestart },
          "configuration reload: these settings changed but take effect only after a restart",
        );
      // Last, so the lines above are written at the level they were asked at.
      current.log_level = next.log_level;
      for (const each of target.loggers) each.level = next.log_level;
      return { applied, needsRestart };
    },
  };
}
