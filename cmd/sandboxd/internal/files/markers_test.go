package files

import "testing"

const readKey = "[REDACTED:openai-api-key]"

// TestWriteRefusesNewMarkers: what Read showed of a file with a secret
// holds a marker; writing it back would put the marker in place of the
// secret. Issue 16, item 6.
func TestWriteRefusesNewMarkers(t *testing.T) {
	fx, l := readFixture(t, "conf.py", "KEY = 'the real key'\nDEBUG = False\n")
	_, err := fx.f.Write(l, "conf.py", "KEY = '"+readKey+"'\nDEBUG = True\n")
	wantErr(t, err, `write "conf.py": the new content would add 1 redaction marker`, "stands for a secret", "use Edit on the text around it")
	wantEqual(t, fx.content(t, "conf.py"), "KEY = 'the real key'\nDEBUG = False\n")

	// A new file too.
	_, err = fx.f.Write(l, "new.py", "KEY = '"+readKey+"'\n")
	wantErr(t, err, "would add 1 redaction marker")
	// A marker the file already holds may stay, and text that only looks
	// like the start of one is no marker.
	fx.put(t, "doc.md", "Secrets show as "+readKey+".\n")
	fx.read(t, l, "doc.md", 0, 0)
	if _, err := fx.f.Write(l, "doc.md", "Secrets show as "+readKey+" in results.\n[REDACTED: not one]\n"); err != nil {
		t.Fatal(err)
	}
}

func TestEditRefusesNewMarkers(t *testing.T) {
	fx, l := readFixture(t, "conf.py", "KEY = 'the real key'\nDEBUG = False\n")
	_, err := fx.f.Edit(l, "conf.py", "DEBUG = False", "KEY = '"+readKey+"'\nDEBUG = True", false)
	wantErr(t, err, `edit "conf.py": the new content would add 1 redaction marker`, "stands for a secret")
	wantEqual(t, fx.content(t, "conf.py"), "KEY = 'the real key'\nDEBUG = False\n")

	// An edit around a marker the file holds keeps it: allowed.
	fx.put(t, "doc.md", "a "+readKey+" b\n")
	fx.read(t, l, "doc.md", 0, 0)
	if _, err := fx.f.Edit(l, "doc.md", " b\n", " c\n", false); err != nil {
		t.Fatal(err)
	}
	// Moving a marker from old_string into new_string adds none.
	if _, err := fx.f.Edit(l, "doc.md", "a "+readKey, readKey+" a", false); err != nil {
		t.Fatal(err)
	}
	// Copying it does.
	_, err = fx.f.Edit(l, "doc.md", " a c", " a c "+readKey, false)
	wantErr(t, err, "would add 1 redaction marker")
}
