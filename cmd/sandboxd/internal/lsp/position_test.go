package lsp

import "testing"

// TestEncodings converts between byte offsets and each encoding's units
// on a line with a two-byte, a three-byte and a four-byte character (the
// last two UTF-16 units).
func TestEncodings(t *testing.T) {
	line := []byte("aé€😀b")
	for _, c := range []struct {
		enc   Encoding
		bytes []int
		units []int
	}{
		{UTF8, []int{0, 1, 3, 6, 10, 11}, []int{0, 1, 3, 6, 10, 11}},
		{UTF16, []int{0, 1, 3, 6, 10, 11}, []int{0, 1, 2, 3, 5, 6}},
		{UTF32, []int{0, 1, 3, 6, 10, 11}, []int{0, 1, 2, 3, 4, 5}},
	} {
		for i, b := range c.bytes {
			if got := byteToUnits(line, b, c.enc); got != c.units[i] {
				t.Errorf("%s: byteToUnits(%d) = %d, want %d", c.enc, b, got, c.units[i])
			}
			if got := unitsToByte(line, c.units[i], c.enc); got != b {
				t.Errorf("%s: unitsToByte(%d) = %d, want %d", c.enc, c.units[i], got, b)
			}
		}
	}
	// Inside the surrogate pair: before the character, never inside it.
	if got := unitsToByte(line, 4, UTF16); got != 6 {
		t.Errorf("unitsToByte inside a pair = %d, want 6", got)
	}
	if got := unitsToByte(line, 99, UTF16); got != len(line) {
		t.Errorf("unitsToByte past the end = %d, want %d", got, len(line))
	}
}

func TestApplyEdits(t *testing.T) {
	text := []byte("a😀Hello\r\nx := Hello\n")
	got, err := applyEdits(text, []textEdit{
		{Range{Position{1, 5}, Position{1, 10}}, "Hi"},
		{Range{Position{0, 3}, Position{0, 8}}, "Hi"}, // UTF-16: 😀 is two units
	}, UTF16)
	if err != nil || string(got) != "a😀Hi\r\nx := Hi\n" {
		t.Fatalf("applyEdits = %q, %v", got, err)
	}
	if _, err := applyEdits(text, []textEdit{
		{Range{Position{1, 0}, Position{1, 4}}, "y"},
		{Range{Position{1, 2}, Position{1, 6}}, "z"},
	}, UTF8); err == nil {
		t.Fatal("overlapping edits were applied")
	}
}
