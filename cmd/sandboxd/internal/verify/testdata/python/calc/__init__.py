"""A tiny calculator the verify tests check."""
import os


def add(a: int, b: int) -> int:
    return a + b


def sub(a: int, b: int) -> int:
    return a + b


def label(n: int) -> str:
    return n
