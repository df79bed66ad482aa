from shapes.area import area
from shapes.double import double


def test_area():
    assert area(2, 3) == 6


def test_double():
    assert double(2, 3) == 13
