package files

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// marker is a redaction as shared/scrub writes it: [REDACTED:kind].
// Compiled on first use, not when sandboxd starts: the bounded
// repetition makes it the costliest of sandboxd's expressions (2.5 ms
// and 800 allocations, issue 34), and only a change holding a marker
// needs it.
var marker = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\[REDACTED:[^\[\]\s]{1,256}\]`) })

// checkMarkers refuses a change that leaves more redaction markers in a
// file than it had. Every result the agent sees is scrubbed, so a file
// holding a secret reads with [REDACTED:kind] in its place; writing what
// was read back, whole or as an edit, would replace the secret (an API
// key the program needs) with the marker. A marker the file already
// holds may stay.
func checkMarkers(before, after string) error {
	if !strings.Contains(after, "[REDACTED:") {
		return nil // the common case: no scan of the file
	}
	had, has := len(marker().FindAllString(before, -1)), len(marker().FindAllString(after, -1))
	if has <= had {
		return nil
	}
	return fmt.Errorf("the new content would add %s like [REDACTED:kind] to the file (it has %d, it would have %d). "+
		"A marker stands for a secret that was removed from what you read, which you cannot see; writing it "+
		"would replace the secret with the marker. Leave the marked text out of your change: use Edit on the "+
		"text around it, with an old_string and new_string that do not include the marker",
		plural(has-had, "redaction marker"), had, has)
}
