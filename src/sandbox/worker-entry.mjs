// Bootstrap of the sandbox's worker thread (see isolated.ts): a worker starts without the
// parent's module hooks, so it registers tsx itself before loading the TypeScript entry.
import { register } from "tsx/esm/api";

register();
await import("./worker.ts");
