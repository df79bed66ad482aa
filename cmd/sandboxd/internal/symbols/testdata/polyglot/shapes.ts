export interface Polygon {
  corners: number;
}

export class Triangle {
  triangleArea(base: number, height: number): number {
    return (base * height) / 2;
  }
}

export function makeTriangle(size: number): Triangle {
  return new Triangle();
}

export const TRIANGLE_LIMIT = 3;

enum Orientation {
  Up,
}
