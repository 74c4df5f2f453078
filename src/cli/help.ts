/**
 * @module cli/help
 * The usage texts: the overview (`switchyard --help`) and one per command
 * (`switchyard <command> --help`).
 */

const EXIT_CODES = "Exit codes: 0 ok, 1 failure, 2 usage error, 3 not found.";

export const HELP = `Switchyard — a self-hostable AI gateway

Usage: switchyard <command> [options]

Commands:
  start [--workers N]           Start the gateway (PORT, HOST, DATABASE_URL, switchyard.yaml)
  sandbox [--port N] [--host H] Start the provider sandbox on its own
  accounts list                 List accounts
  accounts create --email E [--password P] [--admin] [--balance-micros N]
  accounts credit <id> --amount-micros N --reason R   (negative amount debits)
  keys list --account <id>      List an account's keys
  keys create --account <id> [--name N] [--models a,b] [--rpm N] [--concurrency N] [--expires-at ISO]
  keys revoke <key-id>          Revoke a key
  ledger verify                 Check every balance equals the sum of its ledger
  audit [--action A] [--actor ID] [--target ID] [--limit N]   The audit trail, newest first

Options:
  -h, --help                    Show this help, or a command's (switchyard <command> --help)
  -v, --version                 Show the version
  --json                        accounts, keys, ledger, audit: print JSON instead of text

${EXIT_CODES}
Configuration: see README.md and docs/configuration.md.`;

const JSON_OPTION = "  --json    Print the result as JSON (the HTTP API's objects) instead of text";

export const COMMAND_HELP: Record<string, string> = {
  start: `Usage: switchyard start [--workers N|auto]

Starts the gateway with the configuration in switchyard.yaml (or the file named by
SWITCHYARD_CONFIG) and the environment (PORT, HOST, DATABASE_URL, LOG_LEVEL, ...). With
PostgreSQL it waits up to database_wait_seconds for the database to come up.

Options:
  --workers N   Run N gateway processes on one port (1-64, or auto: one per CPU; default
                server.workers, 1). More than one needs PostgreSQL. The first process
                migrates and bootstraps, then starts the workers and replaces any that dies;
                signals go to every worker.

Signals:
  SIGTERM   Drain: /readyz answers 503 for server.drain_delay_seconds while the listener stays
            open, then the listener closes and in-flight requests finish
            (up to server.shutdown_grace_seconds). A second signal ends the delay at once.
  SIGINT    The same drain without the delay.
  SIGHUP    Reload the catalog, model_aliases, limits and log_level; other changed settings
            are logged as needing a restart.

${EXIT_CODES}
See docs/configuration.md.`,

  sandbox: `Usage: switchyard sandbox [--port N] [--host H]

Starts the provider sandbox alone (default 127.0.0.1:8090; --port 0 picks a free port).
See docs/sandbox.md.`,

  accounts: `Usage:
  switchyard accounts list [--json]
  switchyard accounts create --email E [--password P] [--admin] [--balance-micros N] [--json]
  switchyard accounts credit <account-id> --amount-micros N --reason R [--idempotency-key K] [--json]

Works on the configured database (switchyard.yaml, SWITCHYARD_CONFIG, DATABASE_URL).
The email and password are checked as POST /v1/admin/accounts checks them; a negative
--amount-micros debits. With --idempotency-key the entry is made at most once per account and
key: run again, the command changes nothing and says so (the API's Idempotency-Key).

Options:
${JSON_OPTION}

${EXIT_CODES}`,

  keys: `Usage:
  switchyard keys list --account <account-id> [--json]
  switchyard keys create --account <account-id> [--name N] [--models a,b] [--rpm N]
                         [--concurrency N] [--expires-at ISO] [--json]
  switchyard keys revoke <key-id> [--json]

Works on the configured database. A new key's secret is printed once. Running gateways notice
a revocation within auth.key_cache_ttl_seconds.

Options:
${JSON_OPTION}

${EXIT_CODES}`,

  ledger: `Usage: switchyard ledger verify [--json]

Checks every balance and held amount against the ledger, that none is negative, that no charge
exceeds its hold and that every amount is a safe integer. Exit 1 when any problem is found.

Options:
${JSON_OPTION}

${EXIT_CODES}`,

  audit: `Usage: switchyard audit [--action A] [--actor ID] [--target ID] [--limit N] [--json]

Prints the audit trail of the configured database, newest first: who (actor type, account,
key), what (account.create, account.credit, key.revoke, config.reload, ...), on what (target)
and the changed fields before and after. Secrets are never recorded. See docs/audit.md.

Options:
  --action A   Only events with this action (account.credit, key.create, ...)
  --actor ID   Only events whose actor is this account id
  --target ID  Only events on this target id (an account id, a key id, ...)
  --limit N    At most N events (1-1000, default 50)
${JSON_OPTION}

${EXIT_CODES}`,
};
