import { describe, expect, it } from "vitest";
import { describeDatabaseUrl } from "./connect.ts";
import { isConnectionFailure } from "./connection-failure.ts";

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });

describe("isConnectionFailure", () => {
  it("recognises a database that cannot be reached or dropped the connection", () => {
    for (const error of [
      withCode("connect ECONNREFUSED 127.0.0.1:5432", "ECONNREFUSED"),
      withCode("read ECONNRESET", "ECONNRESET"),
      withCode("getaddrinfo ENOTFOUND db", "ENOTFOUND"),
      withCode("terminating connection due to administrator command", "57P01"),
      withCode("the database system is starting up", "57P03"),
      withCode("connection failure", "08006"),
      new Error("Connection terminated unexpectedly"),
      new Error("Client has encountered a connection error and is not queryable"),
      new Error("timeout exceeded when trying to connect"),
      // Node's connect to several addresses, and a migration wrapping the cause.
      new AggregateError([withCode("connect ECONNREFUSED ::1:5432", "ECONNREFUSED")], ""),
      new Error("Database migration  failed", { cause: withCode("refused", "ECONNREFUSED") }),
    ]) {
      expect({ error: error.message, is: isConnectionFailure(error) }).toEqual({
        error: error.message,
        is: true,
      });
    }
  });

  it("leaves every other failure alone", () => {
    for (const error of [
      withCode('duplicate key value violates unique constraint "accounts_email_key"', "23505"),
      withCode('relation "accounts" does not exist', "42P01"),
      withCode('password authentication failed for user "x"', "28P01"),
      new TypeError("Cannot read properties of undefined"),
      "ECONNREFUSED",
      undefined,
    ]) {
      expect(isConnectionFailure(error)).toBe(false);
    }
  });
});

describe("describeDatabaseUrl", () => {
  it("opens sqlite: and file: forms as SQLite files and hides a PostgreSQL password", () => {
    expect(describeDatabaseUrl("data/x.sqlite")).toEqual({
      dialect: "sqlite",
      location: "data/x.sqlite",
    });
    expect(describeDatabaseUrl("sqlite:data/x.sqlite").location).toBe("data/x.sqlite");
    expect(describeDatabaseUrl("file:data/x.sqlite").location).toBe("data/x.sqlite");
    expect(describeDatabaseUrl("file:///var/lib/x.sqlite").location).toBe("/var/lib/x.sqlite");
    expect(describeDatabaseUrl("postgres://u:secret@db/s")).toEqual({
      dialect: "postgres",
      location: "postgres://u:***@db/s",
    });
  });
});
