import fc from "fast-check";
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { SeriesCounter, SeriesGauge, SeriesHistogram } from "./series.ts";

const LABELS = ["route", "status"] as const;
const BUCKETS = [0.005, 0.01, 0.1, 1, 10];

/** Label values, including ones the exposition must escape. */
const labelValue = fc.constantFrom("a", "b", "/v1/chat", 'quo"te', "back\\slash", "line\nfeed", "");
const update = fc.record({
  values: fc.tuple(labelValue, labelValue),
  amount: fc.oneof(fc.double({ min: 0, max: 50, noNaN: true }), fc.constantFrom(0, 0.005, 10, 11)),
});

/** Lines of an exposition in a fixed order (series are listed in first-use order either way). */
const lines = (text: string) => text.split("\n").sort();

describe("series metrics", () => {
  it("expose exactly what prom-client's own metrics expose for the same updates", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(update, { maxLength: 40 }), async (updates) => {
        const ours = new Registry();
        const theirs = new Registry();
        const counter = new SeriesCounter({
          name: "c_total",
          help: "c",
          labelNames: LABELS,
          registers: [ours],
        });
        const gauge = new SeriesGauge({
          name: "g",
          help: "g",
          labelNames: LABELS,
          registers: [ours],
        });
        const histogram = new SeriesHistogram({
          name: "h",
          help: "h",
          labelNames: LABELS,
          buckets: BUCKETS,
          registers: [ours],
        });
        const reference = {
          counter: new Counter({
            name: "c_total",
            help: "c",
            labelNames: LABELS,
            registers: [theirs],
          }),
          gauge: new Gauge({ name: "g", help: "g", labelNames: LABELS, registers: [theirs] }),
          histogram: new Histogram({
            name: "h",
            help: "h",
            labelNames: LABELS,
            buckets: BUCKETS,
            registers: [theirs],
          }),
        };
        for (const [index, { values, amount }] of updates.entries()) {
          const labels = { route: values[0], status: values[1] };
          counter.inc(values, amount);
          reference.counter.inc(labels, amount);
          const delta = index % 2 === 0 ? amount : -amount;
          gauge.add(values, delta);
          reference.gauge.inc(labels, delta);
          histogram.observe(values, amount);
          reference.histogram.observe(labels, amount);
        }
        expect(lines(await ours.metrics())).toEqual(lines(await theirs.metrics()));
      }),
      { numRuns: 200 },
    );
  });

  it("refuses a counter going down, like prom-client", () => {
    const counter = new SeriesCounter({
      name: "down_total",
      help: "d",
      labelNames: ["a"],
      registers: [new Registry()],
    });
    expect(() => counter.inc(["x"], -1)).toThrow(/only goes up/);
    expect(() => counter.inc(["x"], Number.NaN)).toThrow(/only goes up/);
  });
});
