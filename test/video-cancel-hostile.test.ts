/**
 * `POST /v1/videos/generations/{id}/cancel` on a DashScope task the vendor has already started.
 * The contract (spec, endpoint table): "the canceled task (DashScope tasks still queued);
 * `409 task_not_cancelable` otherwise". DashScope refuses to cancel a RUNNING task (400
 * UnsupportedOperation in its envelope); that refusal is answered as 409 task_not_cancelable,
 * never as the vendor's error, whether the gateway already saw the task running or learns it
 * from the vendor's refusal. A cancel whose ending loses the race to another ending (the task
 * succeeded, failed or expired meanwhile) is a 409 too, never a 200 with a task not canceled.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser, startTestGateway, type TestGateway } from "./support/gateway-harness.ts";

const PATH = "/v1/videos/generations";

interface TaskRecord {
  id: string;
  status: string;
  billing: { state: string; cost_micros: number };
}

async function submit(gateway: TestGateway, key: string, seconds: number): Promise<string> {
  const response = await gateway.request(PATH, {
    key,
    json: {
      model: "motion2.6-t2v",
      input: { prompt: `a long one [[sandbox:video-seconds=${seconds}]]` },
      parameters: { size: "1280*720" },
    },
  });
  expect(response.status).toBe(202);
  return ((await response.json()) as { id: string }).id;
}

async function cancel(gateway: TestGateway, key: string, id: string) {
  const response = await gateway.request(`${PATH}/${id}/cancel`, { key, method: "POST" });
  const body = (await response.json()) as { error?: { code?: string; message?: string } };
  return { status: response.status, code: body.error?.code, message: body.error?.message };
}

const read = async (gateway: TestGateway, key: string, id: string) =>
  (await (await gateway.request(`${PATH}/${id}`, { key })).json()) as TaskRecord;

describe("cancel of a running video task", () => {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startTestGateway({
      config: { tasks: { tick_ms: 20, poll_min_interval_ms: 20, poll_max_interval_ms: 100 } },
    });
  });
  afterAll(() => gateway?.close());

  it("answers 409 task_not_cancelable when the vendor has started the task", async () => {
    const user = await createUser(gateway, { balanceMicros: 20_000_000 });
    const id = await submit(gateway, user.key, 8);
    // Wait until the gateway has seen the vendor start it (PENDING for the first 2 s).
    const deadline = Date.now() + 6000;
    let status = "queued";
    while (status !== "running" && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      status = (await read(gateway, user.key, id)).status;
    }
    expect(status).toBe("running");
    const { status: answered, code } = await cancel(gateway, user.key, id);
    expect({ status: answered, code }).toEqual({ status: 409, code: "task_not_cancelable" });
    expect((await read(gateway, user.key, id)).billing.state).toBe("held");
  });
});

describe("cancel the vendor refuses, or whose ending loses a race", () => {
  let gateway: TestGateway;
  beforeAll(async () => {
    // Polls far apart: the gateway still holds the task as queued when the vendor has started it.
    gateway = await startTestGateway({
      config: {
        tasks: { tick_ms: 60_000, poll_min_interval_ms: 600_000, poll_max_interval_ms: 600_000 },
      },
    });
  });
  afterAll(() => gateway?.close());

  it("answers the vendor's refusal (the task started since the last poll) as 409", async () => {
    const user = await createUser(gateway, { balanceMicros: 20_000_000 });
    const id = await submit(gateway, user.key, 2); // PENDING for the first 0.5 s
    await new Promise((resolve) => setTimeout(resolve, 900));
    expect((await read(gateway, user.key, id)).status).toBe("queued");
    const answer = await cancel(gateway, user.key, id);
    expect({ status: answer.status, code: answer.code }).toEqual({
      status: 409,
      code: "task_not_cancelable",
    });
    expect(answer.message).toMatch(/refused/);
    const task = await read(gateway, user.key, id);
    expect({ status: task.status, billing: task.billing.state }).toEqual({
      status: "queued",
      billing: "held",
    });
  });

  it("answers 409 when another ending wins the race, and settles as that ending", async () => {
    const user = await createUser(gateway, { balanceMicros: 20_000_000 });
    const id = await submit(gateway, user.key, 30);
    const videoTasks = gateway.services.videoTasks;
    const original = videoTasks.finish.bind(videoTasks);
    // Another ending (a submission failure here) lands between the vendor's cancel and ours.
    videoTasks.finish = async (task, status, error) => {
      videoTasks.finish = original;
      await original(task, "failed", { code: "Raced", message: "ended elsewhere" });
      return original(task, status, error);
    };
    try {
      const answer = await cancel(gateway, user.key, id);
      expect({ status: answer.status, code: answer.code }).toEqual({
        status: 409,
        code: "task_not_cancelable",
      });
      expect(answer.message).toMatch(/already failed/);
    } finally {
      videoTasks.finish = original;
    }
    const task = await read(gateway, user.key, id);
    expect({ status: task.status, billing: task.billing }).toMatchObject({
      status: "failed",
      billing: { state: "released", cost_micros: 0 },
    });
  });

  it("still cancels a queued task, releasing its hold", async () => {
    const user = await createUser(gateway, { balanceMicros: 20_000_000 });
    const id = await submit(gateway, user.key, 30);
    const response = await gateway.request(`${PATH}/${id}/cancel`, {
      key: user.key,
      method: "POST",
    });
    expect(response.status).toBe(200);
    const task = (await response.json()) as TaskRecord;
    expect({ status: task.status, billing: task.billing }).toMatchObject({
      status: "canceled",
      billing: { state: "released", cost_micros: 0 },
    });
  });
});
