// A tiny calculator the verify tests check.
import { readFileSync } from "node:fs";

export function add(a, b) {
  return a + b;
}

export function sub(a, b) {
  return a + b;
}

export function same(a, b) {
  return a == b;
}
