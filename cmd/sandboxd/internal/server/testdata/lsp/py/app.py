from util import shout


def main():
    print("héllo 😀", shout("hi"))
    print(shout("there"))
