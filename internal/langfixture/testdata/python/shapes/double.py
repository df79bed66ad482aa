from shapes.area import area


def double(w: int, h: int) -> int:
    return 2 * area(w, h)
