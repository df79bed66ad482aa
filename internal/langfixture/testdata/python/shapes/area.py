def area(w: int, h: int) -> int:
    return w * h
