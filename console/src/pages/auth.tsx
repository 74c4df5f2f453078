/**
 * @module console/pages/auth
 * Log in and register. Registering creates the account and its first key (shown once and kept
 * in memory for the playground), then logs in with a session cookie.
 */
import { useState } from "preact/hooks";
import { logIn } from "../account.ts";
import { api } from "../api.ts";
import { followLink, navigate } from "../router.ts";
import { rememberKey } from "../state.ts";
import type { ApiKey } from "../types.ts";
import { Field, Input, Notice, Page, SecretOnce, useAction } from "../ui.tsx";

function Credentials(props: {
  email: string;
  password: string;
  setEmail: (value: string) => void;
  setPassword: (value: string) => void;
  newPassword?: boolean;
}) {
  return (
    <>
      <Field id="email" label="Email">
        <Input
          id="email"
          type="email"
          autoComplete="email"
          required
          value={props.email}
          onValue={props.setEmail}
        />
      </Field>
      <Field
        id="password"
        label="Password"
        hint={props.newPassword ? "8 to 200 characters." : undefined}
      >
        <Input
          id="password"
          type="password"
          autoComplete={props.newPassword ? "new-password" : "current-password"}
          required
          minLength={props.newPassword ? 8 : undefined}
          value={props.password}
          onValue={props.setPassword}
        />
      </Field>
    </>
  );
}

export function LoginPage() {
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const action = useAction();
  return (
    <Page title="Log in">
      <form
        class="card form"
        onSubmit={(event) => {
          event.preventDefault();
          void action.run(async () => {
            await logIn(email, password);
            navigate("/", true);
          });
        }}
      >
        <Credentials
          email={email}
          password={password}
          setEmail={setEmail}
          setPassword={setPassword}
        />
        <Notice error={action.error} />
        <button type="submit" disabled={action.busy}>
          {action.busy ? "Logging in…" : "Log in"}
        </button>
        <p>
          No account yet?{" "}
          <a href="/console/register" onClick={followLink}>
            Register
          </a>
        </p>
      </form>
    </Page>
  );
}

interface Registered {
  key: string;
  api_key: ApiKey;
}

export function RegisterPage() {
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [created, setCreated] = useState<Registered | undefined>();
  const action = useAction();
  if (created) {
    return (
      <Page title="Welcome">
        <div class="card">
          <SecretOnce label="Your first API key." secret={created.key}>
            <p>It is also ready in the playground until you reload or log out.</p>
          </SecretOnce>
          <button
            type="button"
            onClick={() =>
              void action.run(async () => logIn(email, password).then(() => navigate("/", true)))
            }
            disabled={action.busy}
          >
            Continue to the console
          </button>
          <Notice error={action.error} />
        </div>
      </Page>
    );
  }
  return (
    <Page title="Create an account">
      <form
        class="card form"
        onSubmit={(event) => {
          event.preventDefault();
          void action.run(async () => {
            const body = await api<Registered>("/v1/account/register", {
              json: { email, password },
            });
            rememberKey({
              id: body.api_key.id,
              name: body.api_key.name,
              prefix: body.api_key.prefix,
              secret: body.key,
            });
            setCreated(body);
          });
        }}
      >
        <Credentials
          email={email}
          password={password}
          setEmail={setEmail}
          setPassword={setPassword}
          newPassword
        />
        <Notice error={action.error} />
        <button type="submit" disabled={action.busy}>
          {action.busy ? "Creating…" : "Register"}
        </button>
        <p>
          Have an account?{" "}
          <a href="/console/login" onClick={followLink}>
            Log in
          </a>
        </p>
      </form>
    </Page>
  );
}
