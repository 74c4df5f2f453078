/**
 * @module store/query-template
 * Builds a Kysely query once and reuses its compiled SQL with new values. Building and compiling
 * a query costs more than running it on SQLite, and the billing queries run twice per request,
 * so the hot ones are templates: the builder runs once with placeholder values, and every later
 * call only swaps the parameters. Only for queries whose SQL does not depend on the values.
 */
import type { Compilable, CompiledQuery } from "kysely";

const MARK = "\u0000switchyard-template:";

type Slot = { name: string } | { constant: unknown };

export function queryTemplate<A extends object>(
  build: (args: A) => Compilable,
): (args: A) => CompiledQuery {
  let cached: { compiled: CompiledQuery; slots: Slot[] } | undefined;
  return (args) => {
    if (!cached) {
      const placeholders = Object.fromEntries(
        Object.keys(args).map((name) => [name, `${MARK}${name}`]),
      ) as A;
      const compiled = build(placeholders).compile();
      const slots = compiled.parameters.map(
        (value): Slot =>
          typeof value === "string" && value.startsWith(MARK)
            ? { name: value.slice(MARK.length) }
            : { constant: value },
      );
      cached = { compiled, slots };
    }
    const { compiled, slots } = cached;
    return {
      ...compiled,
      parameters: slots.map((slot) =>
        "name" in slot ? (args as Record<string, unknown>)[slot.name] : slot.constant,
      ),
    };
  };
}
