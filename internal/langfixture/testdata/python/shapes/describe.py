import os


def describe(w: int, h: int) -> str:
    return f"{w} x {h}"


def ratio(w: int, h: int) -> int:
    return w / h
