/**
 * @module console/charts
 * Charts of usage: a time series by day (uPlot, on a canvas of fixed height so nothing moves
 * when it draws) and labelled horizontal bars for totals by model, key or account. Every chart
 * also carries its numbers as text (a legend or the bar labels) for screen readers and tests.
 */
import { useEffect, useRef } from "preact/hooks";
import "uplot/dist/uPlot.min.css";
import { formatCount, formatMicros } from "./money.ts";

export interface DayPoint {
  day: string;
  value: number;
}

function cssVar(name: string, fallback: string): string {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim() || fallback;
}

/** Where the build put `uplot-chart.ts` (a hashed file name), defined by `console/build.ts`. */
declare const UPLOT_CHART_URL: string;
type ChartModule = typeof import("./uplot-chart.ts");
let chartModule: Promise<ChartModule> | undefined;
function loadChartModule(): Promise<ChartModule> {
  chartModule ??= import(/* @vite-ignore */ UPLOT_CHART_URL) as Promise<ChartModule>;
  return chartModule;
}

/** Bars by day; `money` formats values as micro-USD. */
export function DayChart(props: {
  title: string;
  points: DayPoint[];
  money?: boolean;
  id: string;
}) {
  const holder = useRef<HTMLDivElement>(null);
  const empty = props.points.every((point) => point.value === 0);
  const format = (value: number) =>
    props.money ? formatMicros(Math.round(value)) : formatCount(Math.round(value));
  useEffect(() => {
    const element = holder.current;
    if (!element || empty) return;
    let remove: (() => void) | undefined;
    let live = true;
    loadChartModule().then(({ drawDayChart }) => {
      if (!live) return;
      remove = drawDayChart({
        element,
        days: props.points.map((point) => point.day),
        values: props.points.map((point) => point.value),
        title: props.title,
        money: Boolean(props.money),
        colors: {
          stroke: cssVar("--accent", "#2563eb"),
          text: cssVar("--text-muted", "#555"),
          grid: cssVar("--border", "#ddd"),
        },
      });
    });
    return () => {
      live = false;
      remove?.();
    };
  }, [JSON.stringify(props.points), props.money, props.title]);
  const total = props.points.reduce((sum, point) => sum + point.value, 0);
  return (
    <figure class="chart" aria-labelledby={`${props.id}-caption`}>
      <figcaption id={`${props.id}-caption`}>
        {props.title} <span class="muted">(total {format(total)})</span>
      </figcaption>
      <div
        class="chart-canvas"
        ref={holder}
        role="img"
        aria-label={`${props.title}: ${
          props.points
            .filter((point) => point.value !== 0)
            .map((point) => `${point.day} ${format(point.value)}`)
            .join(", ") || "nothing in this range"
        }`}
      >
        {empty ? <p class="empty">No usage in this range.</p> : null}
      </div>
    </figure>
  );
}

export interface Bar {
  label: string;
  cost_micros: number;
  tokens: number;
  requests: number;
}

/** Totals as bars, the widest the largest cost, each labelled with its numbers. */
export function BarChart(props: { title: string; bars: Bar[]; id: string; currency?: string }) {
  const largest = props.bars.reduce((max, bar) => Math.max(max, bar.cost_micros), 0);
  return (
    <figure class="chart bars" aria-labelledby={`${props.id}-caption`} data-testid={props.id}>
      <figcaption id={`${props.id}-caption`}>{props.title}</figcaption>
      {props.bars.length === 0 ? (
        <p class="empty">No usage in this range.</p>
      ) : (
        <ul>
          {props.bars.slice(0, 12).map((bar) => (
            <li key={bar.label}>
              <span class="bar-label" title={bar.label}>
                {bar.label}
              </span>
              <span class="bar-track" aria-hidden="true">
                <span
                  class="bar-fill"
                  style={{
                    width: `${largest > 0 ? Math.max(2, (bar.cost_micros / largest) * 100) : 2}%`,
                  }}
                />
              </span>
              <span class="bar-value">
                {formatMicros(bar.cost_micros, props.currency ?? "USD")} · {formatCount(bar.tokens)}{" "}
                tokens · {formatCount(bar.requests)} req
              </span>
            </li>
          ))}
        </ul>
      )}
    </figure>
  );
}
