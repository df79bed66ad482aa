export function label(w: number, h: number): string {
  return `${w} x ${h}`;
}

export const sample: number = label(2, 3);
