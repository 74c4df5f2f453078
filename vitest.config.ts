import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    // Names the engines found and the suites skipped without them.
    globalSetup: ["test/support/backends-notice.ts"],
  },
});
