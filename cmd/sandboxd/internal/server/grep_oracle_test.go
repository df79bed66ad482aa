package server

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The red team's search oracle (issue 16, item 5): with a GitHub token in
// .env, Read shows [REDACTED:github-token], but Grep's answers to "ghp_a",
// "ghp_b", ... gave the token away a character at a time. Now a line that
// holds a secret never matches, so every probe that extends what is known
// of the secret gets the same answer, whatever the secret holds.

const oracleToken = "ghp_Xq7vR2mK9pL4sT8wY1zB6nC3dF5gH0jAaEeI" // 40 characters, classic format

// alphabet is what a classic token's characters are drawn from.
const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// probeChars are the guesses for the secret's character after a known
// prefix, next being the right one: the whole alphabet (some 3,200 Grep
// calls in all), or under -short a wrong guess, the right one and two
// more wrong ones. An oracle shows as the right guess answered otherwise
// than the wrong ones, which -short still tries in every mode and form.
func probeChars(next byte) string {
	if !testing.Short() {
		return alphabet
	}
	wrong := "aZ5"
	if i := strings.IndexByte(wrong, next); i >= 0 {
		wrong = wrong[:i] + wrong[i+1:]
	}
	return wrong[:1] + string(next) + wrong[1:]
}

func oracleDaemon(t *testing.T, readonly bool) (*daemon, func(map[string]any) string) {
	t.Helper()
	if len(oracleToken) != 40 {
		t.Fatalf("token has %d characters", len(oracleToken))
	}
	d := startDaemon(t, Config{ReadOnly: readonly})
	files := map[string]string{
		".env":            "APP_NAME=demo\nGITHUB_TOKEN=" + oracleToken + "\nDEBUG=true\n",
		"config/app.yaml": "name: demo\nauth:\n  github: " + oracleToken + "\n",
		"src/main.go":     "package main\n\n// reads GITHUB_TOKEN from the environment\nfunc main() {}\n",
	}
	for name, content := range files {
		p := filepath.Join(d.dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cs := d.connect(t, streamable)
	return d, func(args map[string]any) string { return ok(t, cs, "Grep", args) }
}

// TestGrepIsNoSecretOracle runs the binary search end to end: for each
// prefix of the token, every probe prefix+c must get the same answer in
// every output mode and with every option, so the search learns nothing
// beyond the fixed "ghp_".
func TestGrepIsNoSecretOracle(t *testing.T) {
	for _, readonly := range []bool{false, true} {
		t.Run(fmt.Sprintf("readonly=%v", readonly), func(t *testing.T) {
			_, grep := oracleDaemon(t, readonly)
			variants := []map[string]any{
				{"output_mode": "count"},
				{"output_mode": "files_with_matches"},
				{"output_mode": "content"},
				{"output_mode": "content", "-C": 2},
				{"output_mode": "content", "-A": 1, "-B": 1},
				{"output_mode": "count", "-i": true},
				{"output_mode": "count", "multiline": true},
				{"output_mode": "content", "multiline": true},
				{"output_mode": "count", "glob": "*.env"},
				{"output_mode": "count", "glob": "**/*.yaml"},
				{"output_mode": "count", "type": "yaml"},
			}
			// Forms of probe: the plain prefix, one that lets the match
			// end before the secret unless it goes on as guessed, and one
			// that reaches across lines.
			probes := []func(known, c string) string{
				func(known, c string) string { return known + c },
				func(known, c string) string { return "TOKEN(=" + known + c + ")?" },
				func(known, c string) string { return "(?s)APP_NAME(.*" + known + c + ")?" },
			}
			// The search is cut short to bound the test: the first two
			// characters after the prefix, each against the whole
			// alphabet (under -short, a few guesses and the right one),
			// are enough to show a constant answer. Without --readonly
			// only count mode is tried; the tools are the same.
			for i, probe := range probes {
				for j, v := range variants {
					if i == 2 && v["multiline"] != true || !readonly && j > 0 {
						continue
					}
					for n := 4; n < 6; n++ {
						known := oracleToken[:n]
						var first, firstC string
						for _, c := range probeChars(oracleToken[n]) {
							args := map[string]any{"pattern": probe(known, string(c))}
							for k, x := range v {
								args[k] = x
							}
							got := grep(args)
							if strings.Contains(got, oracleToken[4:12]) {
								t.Fatalf("Grep(%v) shows the token: %s", args, got)
							}
							if firstC == "" {
								first, firstC = got, string(c)
								continue
							}
							if got != first {
								t.Fatalf("Grep(%v) = %q but with %q after %q it was %q: the answer depends on the secret",
									args, got, firstC, known, first)
							}
						}
					}
				}
			}
		})
	}
}

// TestGrepAnswersAsIfRedacted: lines holding no secret are found as
// before, in every mode; a line holding one never matches, also not for a
// pattern that matches the redaction marker, and shows only as context.
func TestGrepAnswersAsIfRedacted(t *testing.T) {
	d, grep := oracleDaemon(t, true)
	env, yaml, main := filepath.Join(d.dir, ".env"), filepath.Join(d.dir, "config/app.yaml"), filepath.Join(d.dir, "src/main.go")
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"pattern": "ghp_", "output_mode": "count"}, "No matches found"},
		{map[string]any{"pattern": "ghp_"}, "No matches found"},
		{map[string]any{"pattern": "GITHUB_TOKEN", "output_mode": "files_with_matches", "glob": "*.go"}, main},
		{map[string]any{"pattern": "REDACTED", "output_mode": "count"}, "No matches found"},
		{map[string]any{"pattern": "demo", "output_mode": "count", "glob": "*.env"}, env + ":1"},
		{map[string]any{"pattern": "demo", "output_mode": "content", "path": ".env", "-A": 2}, env + ":1:APP_NAME=demo\n" +
			env + "-2-GITHUB_TOKEN=[REDACTED:github-token]\n" + env + "-3-DEBUG=true"},
		{map[string]any{"pattern": "DEBUG|TOKEN", "output_mode": "content", "path": ".env"}, env + ":3:DEBUG=true"},
		{map[string]any{"pattern": "^auth", "output_mode": "content", "path": "config", "-C": 1}, yaml + "-1-name: demo\n" +
			yaml + ":2:auth:\n" + yaml + "-3-  github: [REDACTED:github-token]"},
		{map[string]any{"pattern": "name: demo\nauth", "output_mode": "count", "multiline": true}, "No matches found"},
		{map[string]any{"pattern": "package main\n", "output_mode": "count", "multiline": true}, main + ":1"},
	} {
		if got := grep(tc.args); got != tc.want {
			t.Errorf("Grep(%v) =\n%s\nwant\n%s", tc.args, got, tc.want)
		}
	}
	// A file that quotes a redaction holds no secret: it is found.
	quote := filepath.Join(d.dir, "notes.txt")
	os.WriteFile(quote, []byte("Read showed [REDACTED:github-token] here\n"), 0o644)
	if got := grep(map[string]any{"pattern": `\[REDACTED:github-token\]`, "output_mode": "count"}); got != quote+":1" {
		t.Errorf("Grep of a quoted marker = %q", got)
	}
}
