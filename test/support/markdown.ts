/**
 * @module test/support/markdown
 * Reading the parts of the docs that tests check mechanically: a section under a heading and
 * the first cells of its tables.
 */

/** The lines of the markdown section that starts with `heading`, up to the next heading of its level. */
export function section(markdown: string, heading: string): string {
  const lines = markdown.split("\n");
  const start = lines.findIndex((line) => line.trim() === heading);
  if (start < 0) throw new Error(`no section '${heading}'`);
  const level = heading.indexOf(" ");
  const end = lines.findIndex(
    (line, index) =>
      index > start && /^#+ /.test(line) && line.indexOf(" ") <= level && line.startsWith("#"),
  );
  return lines.slice(start + 1, end < 0 ? undefined : end).join("\n");
}

/** The first cell of every row of the markdown tables in `text`, header rows excluded. */
export function firstCells(text: string): string[] {
  return text
    .split("\n")
    .filter((line) => line.startsWith("|") && !/^\|\s*-/.test(line))
    .map((line) => line.split("|")[1]!.trim())
    .filter((cell, index, cells) => index > 0 || !/^[A-Z][a-z]/.test(cell) || cells.length === 1);
}

/** The `UPPER_CASE` names in backticks in the first cells of the tables in `text`. */
export function variablesOfTable(text: string): string[] {
  return firstCells(text).flatMap((cell) =>
    [...cell.matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((match) => match[1]!),
  );
}
