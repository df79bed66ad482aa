// label names a count; the verify tests expect one type error here.
export function label(n: number): string {
  return n;
}
