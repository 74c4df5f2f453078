/**
 * @module catalog/load-catalog
 * Loads the shipped catalog (`catalog/vendors.yaml`, `catalog/models/*.yaml`), then operator
 * additions and overrides, and validates everything at boot. Later entries with the same id
 * replace earlier ones, so operators never edit the shipped files.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Value } from "@sinclair/typebox/value";
import { parse as parseYaml } from "yaml";
import { CatalogFile, type ModelEntry, type VendorEntry } from "./schema.ts";

export const SHIPPED_CATALOG_DIR = fileURLToPath(new URL("../../catalog", import.meta.url));

export interface CatalogData {
  vendors: Record<string, VendorEntry>;
  models: ModelEntry[];
}

export class CatalogError extends Error {
  override name = "CatalogError";
}

export function readCatalogFile(path: string): CatalogFile {
  let parsed: unknown;
  try {
    parsed = parseYaml(readFileSync(path, "utf8"));
  } catch (error) {
    throw new CatalogError(`${path}: ${(error as Error).message}`);
  }
  const errors = [...Value.Errors(CatalogFile, parsed)];
  if (errors.length > 0) {
    const detail = errors
      .slice(0, 5)
      .map((error) => `  ${error.path}: ${error.message}`)
      .join("\n");
    throw new CatalogError(`${path} is not a valid catalog file:\n${detail}`);
  }
  return parsed as CatalogFile;
}

function shippedFiles(dir: string): string[] {
  const models = readdirSync(join(dir, "models"))
    .filter((name) => name.endsWith(".yaml") || name.endsWith(".yml"))
    .sort()
    .map((name) => join(dir, "models", name));
  return [join(dir, "vendors.yaml"), ...models];
}

export function loadCatalogData(options: {
  dir?: string;
  extraFiles?: string[];
  extraVendors?: Record<string, VendorEntry>;
  extraModels?: ModelEntry[];
}): CatalogData {
  const vendors: Record<string, VendorEntry> = {};
  const models = new Map<string, ModelEntry>();
  const files = [
    ...shippedFiles(options.dir ?? SHIPPED_CATALOG_DIR),
    ...(options.extraFiles ?? []),
  ];
  for (const file of files) {
    const data = readCatalogFile(file);
    Object.assign(vendors, data.vendors ?? {});
    for (const model of data.models ?? []) models.set(model.id, model);
  }
  Object.assign(vendors, options.extraVendors ?? {});
  for (const model of options.extraModels ?? []) models.set(model.id, model);

  const aliases = new Map<string, string>();
  for (const model of models.values()) {
    for (const route of model.routes) {
      if (!vendors[route.vendor] && !(route.adapter && route.base_url)) {
        throw new CatalogError(`Model '${model.id}' routes to unknown vendor '${route.vendor}'.`);
      }
    }
    for (const alias of model.aliases ?? []) {
      const owner = aliases.get(alias);
      if ((owner && owner !== model.id) || (models.has(alias) && alias !== model.id)) {
        throw new CatalogError(
          `Alias '${alias}' of '${model.id}' is already taken by '${owner ?? alias}'.`,
        );
      }
      aliases.set(alias, model.id);
    }
  }
  return { vendors, models: [...models.values()] };
}
