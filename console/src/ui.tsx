/**
 * @module console/ui
 * The console's small kit: loading data, notices, form fields, copy buttons, money and dates.
 */
import type { ComponentChildren, JSX } from "preact";
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { ApiError } from "./api.ts";
import { formatMicros, type Micros } from "./money.ts";

export interface Loaded<T> {
  data: T | undefined;
  error: string | undefined;
  loading: boolean;
  reload: () => void;
}

/** Runs `load` when `deps` change (and on `reload()`), keeping the last data while reloading. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const [loading, setLoading] = useState(true);
  const [round, setRound] = useState(0);
  useEffect(() => {
    let live = true;
    setLoading(true);
    load().then(
      (value) => {
        if (!live) return;
        setData(value);
        setError(undefined);
        setLoading(false);
      },
      (failure: unknown) => {
        if (!live) return;
        setError(messageOf(failure));
        setLoading(false);
      },
    );
    return () => {
      live = false;
    };
  }, [...deps, round]);
  const reload = useCallback(() => setRound((n) => n + 1), []);
  return { data, error, loading, reload };
}

export function messageOf(failure: unknown): string {
  if (failure instanceof ApiError) return `${failure.message} (${failure.code})`;
  return failure instanceof Error ? failure.message : String(failure);
}

/** Runs an action, keeping its busy state and its error or success message. */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const [done, setDone] = useState<string | undefined>();
  const run = useCallback(async (action: () => Promise<unknown>) => {
    setBusy(true);
    setError(undefined);
    setDone(undefined);
    try {
      const message = await action();
      if (typeof message === "string" && message) setDone(message);
    } catch (failure) {
      setError(messageOf(failure));
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, done, run };
}

export function Page(props: {
  title: string;
  children: ComponentChildren;
  actions?: ComponentChildren;
}) {
  useEffect(() => {
    document.title = `${props.title} · Switchyard`;
  }, [props.title]);
  return (
    <section class="page" aria-labelledby="page-title">
      <header class="page-head">
        <h1 id="page-title" tabIndex={-1}>
          {props.title}
        </h1>
        {props.actions ? <div class="page-actions">{props.actions}</div> : null}
      </header>
      {props.children}
    </section>
  );
}

/**
 * An action's error or success. With `focus`, a new message takes the keyboard focus: for actions
 * whose button goes away or is disabled (revoking a row), so focus does not fall to the page.
 */
export function Notice(props: {
  error?: string | undefined;
  done?: string | undefined;
  focus?: boolean;
}) {
  const shown = useRef<HTMLParagraphElement>(null);
  const message = props.error ?? props.done;
  useEffect(() => {
    if (props.focus && message) shown.current?.focus();
  }, [message, props.focus]);
  return (
    <div class="notice-slot" aria-live="polite">
      {props.error ? (
        <p class="notice error" role="alert" tabIndex={-1} ref={shown}>
          {props.error}
        </p>
      ) : props.done ? (
        <p class="notice ok" tabIndex={-1} ref={shown}>
          {props.done}
        </p>
      ) : null}
    </div>
  );
}

export function Field(props: {
  label: string;
  hint?: string;
  children: ComponentChildren;
  id: string;
}) {
  return (
    <div class="field">
      <label for={props.id}>{props.label}</label>
      {props.children}
      {props.hint ? (
        <small id={`${props.id}-hint`} class="hint">
          {props.hint}
        </small>
      ) : null}
    </div>
  );
}

type InputProps = Omit<JSX.InputHTMLAttributes<HTMLInputElement>, "value"> & {
  value: string;
  onValue: (value: string) => void;
};

export function Input({ value, onValue, ...rest }: InputProps) {
  return (
    <input
      {...rest}
      value={value}
      onInput={(event) => onValue((event.currentTarget as HTMLInputElement).value)}
    />
  );
}

export function CopyButton(props: { text: string; label?: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <button
      type="button"
      class="secondary"
      onClick={async () => {
        try {
          await navigator.clipboard.writeText(props.text);
          setCopied(true);
          setTimeout(() => setCopied(false), 2000);
        } catch {
          setCopied(false);
        }
      }}
    >
      {copied ? "Copied" : (props.label ?? "Copy")}
    </button>
  );
}

/** A secret shown once, with a copy button and the warning that it will not be shown again. */
export function SecretOnce(props: { label: string; secret: string; children?: ComponentChildren }) {
  return (
    <div class="secret" role="status">
      <p>
        <strong>{props.label}</strong> It is shown only now: copy it somewhere safe.
      </p>
      <div class="secret-row">
        <code data-testid="secret">{props.secret}</code>
        <CopyButton text={props.secret} />
      </div>
      {props.children}
    </div>
  );
}

export function Money(props: { micros: Micros; currency?: string }) {
  return <span class="money">{formatMicros(props.micros, props.currency ?? "USD")}</span>;
}

/**
 * A moment, in the browser's time zone; with `utc`, in UTC as `2026-11-28 07:50:01 UTC` (the
 * usage view, whose date range and per-day charts are UTC days).
 */
export function When(props: { at: string | number | null | undefined; utc?: boolean }) {
  if (props.at === null || props.at === undefined) return <span class="muted">—</span>;
  const date = new Date(
    typeof props.at === "number" && props.at < 1e12 ? props.at * 1000 : props.at,
  );
  if (Number.isNaN(date.getTime())) return <span>{String(props.at)}</span>;
  const iso = date.toISOString();
  return (
    <time dateTime={iso}>
      {props.utc ? `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC` : date.toLocaleString()}
    </time>
  );
}

export function Badge(props: {
  tone?: "ok" | "warn" | "bad" | "info";
  children: ComponentChildren;
}) {
  return <span class={`badge ${props.tone ?? "info"}`}>{props.children}</span>;
}

export function Empty(props: { children: ComponentChildren }) {
  return <p class="empty">{props.children}</p>;
}

/** "Load more" for cursor lists. */
export function MoreButton(props: { hasMore: boolean; busy: boolean; onMore: () => void }) {
  if (!props.hasMore) return null;
  return (
    <button type="button" class="secondary" disabled={props.busy} onClick={props.onMore}>
      {props.busy ? "Loading…" : "Load more"}
    </button>
  );
}
