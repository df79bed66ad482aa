"""Helpers for app."""


def shout(text):
    return text.upper() + "!"
