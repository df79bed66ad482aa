class Circle:
    def circle_area(self, scale):
        return 3.14 * scale


def make_circle(radius):
    return Circle()


CIRCLE_LIMIT = 10
