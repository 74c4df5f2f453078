import { describe, expect, it } from "vitest";
import { readXaiErrorFields } from "./xai-error.ts";

describe("readXaiErrorFields", () => {
  it("reads OpenAI's envelope (code, else type)", () => {
    expect(
      readXaiErrorFields({ error: { message: "bad duration", code: "invalid_argument" } }),
    ).toEqual({ message: "bad duration", code: "invalid_argument" });
    expect(readXaiErrorFields({ error: { message: "m", type: "invalid_request_error" } })).toEqual({
      message: "m",
      code: "invalid_request_error",
    });
  });

  it("reads the flat shape with the message in error (or message)", () => {
    expect(
      readXaiErrorFields({ code: "permission_denied", error: "Your key cannot use this model." }),
    ).toEqual({ message: "Your key cannot use this model.", code: "permission_denied" });
    expect(readXaiErrorFields({ code: "internal_error", message: "oops" })).toEqual({
      message: "oops",
      code: "internal_error",
    });
  });

  it("gives nothing for bodies without those fields", () => {
    expect(readXaiErrorFields({})).toEqual({});
    expect(readXaiErrorFields({ error: {}, code: 4 })).toEqual({});
    expect(readXaiErrorFields({ error: "", code: "" })).toEqual({});
  });
});
