/**
 * @module console/uplot-chart
 * Draws a bar series by day with uPlot. Built as its own file and loaded only when a page shows
 * a chart, so the first page does not wait for uPlot (about half the console's bytes).
 */
import uPlot from "uplot";
import { formatCount, formatMicros } from "./money.ts";

export interface DayChartInput {
  element: HTMLElement;
  days: string[];
  values: number[];
  title: string;
  money: boolean;
  colors: { stroke: string; text: string; grid: string };
}

/** Draws the chart and keeps it as wide as its element; returns the function that removes it. */
export function drawDayChart(input: DayChartInput): () => void {
  const { element, colors } = input;
  // Axis labels without the currency (the chart's caption names it), so they stay short.
  const format = (value: number) =>
    input.money ? formatMicros(Math.round(value), "").trim() : formatCount(Math.round(value));
  const xs = input.days.map((day) => Date.parse(`${day.slice(0, 10)}T00:00:00Z`) / 1000);
  const axis = {
    stroke: colors.text,
    grid: { stroke: colors.grid, width: 1 },
    ticks: { stroke: colors.grid, width: 1 },
  };
  const plot = new uPlot(
    {
      width: Math.max(280, element.clientWidth),
      height: 200,
      legend: { show: false },
      cursor: { drag: { x: false, y: false } },
      scales: {
        // half a day either side, so the first and last bars show whole
        x: { time: true, range: (_u, min, max) => [min - 43_200, max + 43_200] },
        y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] },
      },
      axes: [
        { ...axis },
        { ...axis, size: input.money ? 76 : 56, values: (_u, values) => values.map(format) },
      ],
      series: [
        {},
        {
          label: input.title,
          stroke: colors.stroke,
          fill: colors.stroke,
          width: 0,
          paths: uPlot.paths.bars?.({ size: [0.7, 48, 2] }),
          points: { show: false },
          value: (_u, value) => (value === null ? "—" : format(value)),
        },
      ],
    },
    [xs, input.values],
    element,
  );
  const resize = new ResizeObserver(() =>
    plot.setSize({ width: Math.max(280, element.clientWidth), height: 200 }),
  );
  resize.observe(element);
  return () => {
    resize.disconnect();
    plot.destroy();
  };
}
