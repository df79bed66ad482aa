import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { add, sub } from "../src/calc.js";

describe("calc", () => {
  test("adds", () => {
    assert.equal(add(2, 3), 5);
  });

  test("subtracts", () => {
    assert.equal(sub(5, 3), 2);
  });

  test("skipped", { skip: "not today" }, () => {});
});
