/** Types of bin/entry.js (plain JavaScript: it runs before any TypeScript loader). */
export declare const BUILD_STAMP: string;
export declare function chooseEntry(root: string, forced: string | undefined): "build" | "sources";
