package main

import (
	"context"
	"encoding/hex"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/altairalabs/promptkit-sandbox/internal/proctest"
	"github.com/altairalabs/promptkit-sandbox/internal/sandboxtest"
)

// The adversarial suite of issue 16: every numbered item of the red
// team's report, tried as an attacker would, over a real MCP client
// (the official go-sdk) against the built binary, on Streamable HTTP,
// SSE and stdio. The agent is the adversary: prompt injection turns it
// against its user.
//
// As root, each daemon's workspace belongs to UID 65534, so the agent's
// commands run as that user (sandboxd's default); the parts that need
// that (item 1's kill and token file, item 13) are skipped otherwise,
// unless CI is set. Against the binary before the fixes (0e46324) every
// item fails but 3, whose process containment landed earlier.

// advCase is one numbered item of the report.
type advCase struct {
	name string
	run  func(t *testing.T, d *advDaemon)
	opts advOptions
	// stdioSkip, when set, is why the item does not apply over stdio.
	stdioSkip string
	// once, when set, is an item about the process, not a transport: it
	// runs once, as the subtest "cli".
	once func(t *testing.T)
}

var advCases = []advCase{
	{name: "item01-proc-environ", run: advProcEnviron},
	{name: "item02-scrub-across-cuts", run: advScrubAcrossCuts},
	{name: "item03-no-process-escapes", run: advNoEscapes},
	{name: "item04-session-scoped-shells", run: advSessionShells,
		stdioSkip: "stdio carries exactly one client session per sandboxd process: there is no second session to attack from"},
	{name: "item05-grep-oracle", run: advGrepOracle},
	{name: "item06-no-false-redactions", run: advNoFalseRedactions},
	{name: "item07-git-writes", run: advGitWrites},
	{name: "item08-grep-long-line", run: advGrepLongLine},
	{name: "item09-denylist", run: advDenylist, opts: advOptions{shim: true}},
	{name: "item10-cors", run: advCORS,
		stdioSkip: "CORS is a browser's HTTP matter; stdio has no origin"},
	{name: "item11-short-token-off-loopback", once: advShortTokenOffLoopback},
	{name: "item12-symlinks-and-long-paths", run: advSymlinksAndLongPaths},
	{name: "item13-hard-links", run: advHardLinks},
}

// TestAdversarial runs every case on every transport, each against its
// own sandboxd; the transports of one case run side by side.
func TestAdversarial(t *testing.T) {
	binary(t)
	for _, c := range advCases {
		t.Run(c.name, func(t *testing.T) {
			if c.once != nil {
				t.Run("cli", c.once)
				return
			}
			for _, tr := range advTransports {
				t.Run(string(tr), func(t *testing.T) {
					t.Parallel()
					if tr == advStdio && c.stdioSkip != "" {
						t.Skip(c.stdioSkip)
					}
					c.run(t, startAdv(t, tr, c.opts))
				})
			}
		})
	}
}

// alnum is what GitHub's classic tokens are drawn from.
const alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// newGitHubToken is a fresh classic GitHub token: ghp_ and 36 characters.
func newGitHubToken() string {
	raw, _ := hex.DecodeString(randomHex(36))
	for i := range raw {
		raw[i] = alnum[int(raw[i])%len(alnum)]
	}
	return "ghp_" + string(raw)
}

// Item 1: a --secret-env value and the token are out of the agent's
// reach: not in sandboxd's /proc/PID/environ or cmdline, whether read
// raw or carried past the scrubber by a transform; as root, the agent's
// commands run as another user, who cannot kill sandboxd or read the
// token file.
func advProcEnviron(t *testing.T, d *advDaemon) {
	pid := strconv.Itoa(d.pid)
	leaks := []string{d.secret, d.token, d.tokenFile, advSecretName + "="}
	// What any process of the host sees.
	for _, f := range []string{"environ", "cmdline"} {
		if b, err := os.ReadFile("/proc/" + pid + "/" + f); err == nil {
			if l := leaksAny(string(b), leaks...); l != "" {
				t.Errorf("/proc/%s/%s holds %q", pid, f, l)
			}
		}
	}
	// The red team's command, verbatim, and sandboxd's own files by PID.
	got := d.bash(t, `tr "\0" "\n" </proc/$PPID/environ; tr "\0" " " </proc/$PPID/cmdline; `+
		`tr "\0" "\n" </proc/`+pid+`/environ; tr "\0" " " </proc/`+pid+`/cmdline; echo`)
	if l := leaksAny(got, leaks...); l != "" {
		t.Errorf("a Bash call reads %q in sandboxd's /proc files:\n%.3000s", l, got)
	}
	// Transforms that no scrubber undoes: reversed, upper-cased, and every
	// ancestor's files up to sandboxd in hex, decoded here.
	got = d.bash(t, `rev </proc/`+pid+`/environ; tr a-z A-Z </proc/`+pid+`/environ; rev </proc/`+pid+`/cmdline; echo`)
	for _, l := range leaks {
		for _, form := range []string{reverse(l), strings.ToUpper(l)} {
			if strings.Contains(got, form) {
				t.Errorf("a transformed read of sandboxd's /proc files shows %q (%q):\n%.3000s", form, l, got)
			}
		}
	}
	dump := d.bash(t, `p=$$; while :; do for f in environ cmdline; do echo "== $p $f"; od -An -v -tx1 /proc/$p/$f 2>&1 | tr -d ' \n'; echo; done; `+
		`[ "$p" = `+pid+` ] || [ "$p" -le 1 ] && break; p=$(sed -n 's/^PPid:[[:space:]]*//p' /proc/$p/status); done`)
	if !strings.Contains(dump, "== "+pid+" environ") {
		t.Errorf("the walk up from the shell never reached sandboxd (%s):\n%.2000s", pid, dump)
	}
	for _, line := range strings.Split(dump, "\n") {
		b, err := hex.DecodeString(strings.TrimSpace(line))
		if err != nil || len(b) == 0 {
			continue
		}
		if l := leaksAny(string(b), leaks...); l != "" {
			t.Errorf("an ancestor's /proc file, read in hex by a Bash call, holds %q", l)
		}
	}
	if !d.runAs {
		proctest.HaveRoot(t, "the kill and token-file attacks (as the same user they succeed, as documented)")
		return
	}
	if got := d.bash(t, "id -u; id -g"); got != "65534\n65534\n" {
		t.Errorf("commands run as %q, want 65534", got)
	}
	got = d.bash(t, "kill -9 "+pid+" 2>&1; echo kill=$?; cat "+d.tokenFile+" 2>&1; echo cat=$?")
	if !strings.Contains(got, "kill=1") || !strings.Contains(got, "cat=1") || strings.Contains(got, d.token) {
		t.Errorf("kill -9 sandboxd and cat of the token file: %q; want both to fail", got)
	}
	if !proctest.Alive(d.pid) {
		t.Fatal("a Bash call killed sandboxd")
	}
	if got := d.bash(t, "echo still here"); got != "still here\n" {
		t.Errorf("after the kill: %q", got)
	}
}

func reverse(s string) string {
	b := []byte(s)
	for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
		b[i], b[j] = b[j], b[i]
	}
	return string(b)
}

// Item 2: a secret printed across the 64 KiB point where BashOutput used
// to cut a long line comes out redacted whole, over two reads; a secret
// straddling Read's 2,000-character cut shows no part.
func advScrubAcrossCuts(t *testing.T, d *advDaemon) {
	ghp := newGitHubToken()
	for i, s := range []struct{ name, value, marker string }{
		{"registered", d.secret, "[REDACTED:secret:" + advSecretName + "]"},
		{"github token", ghp, "[REDACTED:github-token]"},
	} {
		// The first write ends 16 bytes into the secret, past 64 KiB; the
		// rest follows only once a read has returned what came before.
		const half = 16
		n := strconv.Itoa(i)
		d.put(t, "p1-"+n, strings.Repeat("x", 65536-9)+" "+s.value[:half])
		d.put(t, "p2-"+n, s.value[half:]+" tail\n")
		out := must(t, d.cs, "Bash", map[string]any{"run_in_background": true,
			"command": "cat p1-" + n + "; while [ ! -e go-" + n + " ]; do sleep 0.05; done; cat p2-" + n})
		id := strings.TrimPrefix(out, "Started background shell ")
		var reads []string
		deadline := time.Now().Add(30 * time.Second)
		for {
			r := must(t, d.cs, "BashOutput", map[string]any{"bash_id": id})
			reads = append(reads, r)
			if strings.Contains(r, "--- stdout ---") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: no output of the first 64 KiB: %q", s.name, reads)
			}
			time.Sleep(50 * time.Millisecond)
		}
		d.put(t, "go-"+n, "")
		for !strings.HasPrefix(reads[len(reads)-1], "Status: exited") {
			if time.Now().After(deadline) {
				t.Fatalf("%s: the shell did not end: %q", s.name, reads[len(reads)-1])
			}
			time.Sleep(50 * time.Millisecond)
			reads = append(reads, must(t, d.cs, "BashOutput", map[string]any{"bash_id": id}))
		}
		all := strings.Join(reads, "\n")
		if l := leaksAny(all, fragments(s.value, 6)...); l != "" {
			t.Errorf("%s: BashOutput shows %q of the secret across %d reads", s.name, l, len(reads))
		}
		if c := strings.Count(all, s.marker); c != 1 {
			t.Errorf("%s: the reads show %s %d times, want once; the end of each read: %q", s.name, s.marker, c, tails(reads, 120))
		}
	}

	// Read's cut at 2,000 characters falls inside each secret.
	line := func(secret string) string {
		return strings.Repeat("x", 1989) + " " + secret + " " + strings.Repeat("y", 1000) + "\n"
	}
	d.put(t, "long.txt", line(ghp)+line(d.secret))
	got := must(t, d.cs, "Read", map[string]any{"file_path": "long.txt"})
	for _, v := range []string{ghp, d.secret} {
		if l := leaksAny(got, fragments(v, 6)...); l != "" {
			t.Errorf("Read shows %q of a secret straddling the cut: %q", l, tails([]string{got}, 200))
		}
	}
	if c := strings.Count(got, "[line truncated:"); c != 2 {
		t.Errorf("Read cut %d lines, want 2: %q", c, tails([]string{got}, 200))
	}
}

// tails are the last n bytes of each text.
func tails(texts []string, n int) []string {
	out := make([]string, len(texts))
	for i, s := range texts {
		out[i] = s[max(0, len(s)-n):]
	}
	return out
}

// Item 3: setsid, setsid -f and a double-forked Python daemon started by
// Bash are gone when the call ends, when its timeout fires and when
// KillShell stops its background shell.
func advNoEscapes(t *testing.T, d *advDaemon) {
	marker := sandboxtest.NewMarker()
	if got := d.bash(t, escapeScript(marker, "echo done")); !strings.Contains(got, "done") {
		t.Fatalf("Bash: %q", got)
	}
	sandboxtest.AssertNoProcs(t, marker, 5*time.Second)

	marker = sandboxtest.NewMarker()
	r := try(t, d.cs, "Bash", map[string]any{"command": escapeScript(marker, `sleep 300 "$0"`), "timeout": 2000})
	if !strings.Contains(r.text, "timed out") && !strings.Contains(r.text, "timeout") {
		t.Errorf("Bash past its timeout: %+v", r)
	}
	sandboxtest.AssertNoProcs(t, marker, 5*time.Second)

	marker = sandboxtest.NewMarker()
	out := must(t, d.cs, "Bash", map[string]any{"command": escapeScript(marker, `sleep 300 "$0"`), "run_in_background": true})
	id := strings.TrimPrefix(out, "Started background shell ")
	waitSleeps(t, marker, wantSleeps+1)
	if got := must(t, d.cs, "KillShell", map[string]any{"shell_id": id}); got != "Killed background shell "+id {
		t.Errorf("KillShell: %q", got)
	}
	sandboxtest.AssertNoProcs(t, marker, 5*time.Second)

	// SIGKILL of sandboxd itself takes the foreground and background
	// shells' escapers with it.
	k := startAdv(t, d.tr, advOptions{})
	bg, fg := sandboxtest.NewMarker(), sandboxtest.NewMarker()
	must(t, k.cs, "Bash", map[string]any{"command": escapeScript(bg, `sleep 300 "$0"`), "run_in_background": true})
	go func() {
		// Ends with an error when sandboxd dies.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_, _ = k.cs.CallTool(ctx, &mcp.CallToolParams{Name: "Bash", Arguments: map[string]any{
			"command": escapeScript(fg, `sleep 300 "$0"`), "timeout": 600000}})
	}()
	waitSleeps(t, bg, wantSleeps+1)
	waitSleeps(t, fg, wantSleeps+1)
	if k.runAs {
		// A home sandboxd made for the run-as user, which a SIGKILL
		// leaves behind.
		home := strings.TrimSpace(must(t, k.cs, "Bash", map[string]any{"command": "echo $HOME"}))
		if strings.HasPrefix(home, os.TempDir()+"/sandboxd-home-") {
			t.Cleanup(func() { os.RemoveAll(home) })
		}
	}
	if err := syscall.Kill(k.pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	sandboxtest.AssertNoProcs(t, bg, 5*time.Second)
	sandboxtest.AssertNoProcs(t, fg, 5*time.Second)
}

// Item 4: a second session can neither read nor kill the first's
// background shell, nor write a file only the first has read; a session
// that ends takes its shells with it.
func advSessionShells(t *testing.T, d *advDaemon) {
	a := d.cs
	marker := sandboxtest.NewMarker()
	out := must(t, a, "Bash", map[string]any{"run_in_background": true,
		"command": "echo session-a-output-" + marker + "; exec sleep 300 " + marker})
	id := strings.TrimPrefix(out, "Started background shell ")
	waitSleeps(t, marker, 1)

	b := d.connect(t)
	for _, c := range []struct{ tool, arg string }{{"BashOutput", "bash_id"}, {"KillShell", "shell_id"}} {
		msg := refused(t, b, c.tool, map[string]any{c.arg: id})
		if !strings.Contains(msg, `no background shell with ID "`+id+`" (there are none)`) || strings.Contains(msg, "session-a-output") {
			t.Errorf("%s of session A's shell from session B: %q", c.tool, msg)
		}
	}
	if procs, _ := sandboxtest.HostProcs(marker); len(procs) != 1 {
		t.Errorf("session A's shell after session B's KillShell: %v", procs)
	}
	if got := must(t, a, "BashOutput", map[string]any{"bash_id": id}); got != "Status: running\n--- stdout ---\nsession-a-output-"+marker+"\n" &&
		got != "Status: running\n--- stdout ---\nsession-a-output-"+marker {
		t.Errorf("session A's own BashOutput: %q", got)
	}

	// Read-before-write is the session's own.
	d.put(t, "shared.txt", "original\n")
	must(t, a, "Read", map[string]any{"file_path": "shared.txt"})
	if msg := refused(t, b, "Write", map[string]any{"file_path": "shared.txt", "content": "from B\n"}); !strings.Contains(msg, "has not been read in this session") {
		t.Errorf("session B's Write of a file only A read: %q", msg)
	}

	// A session that ends kills its shells.
	c := d.connect(t)
	ended := sandboxtest.NewMarker()
	must(t, c, "Bash", map[string]any{"command": escapeScript(ended, `sleep 300 "$0"`), "run_in_background": true})
	waitSleeps(t, ended, wantSleeps+1)
	if err := c.Close(); err != nil {
		t.Logf("closing session C: %v", err)
	}
	sandboxtest.AssertNoProcs(t, ended, 15*time.Second)

	if got := must(t, a, "KillShell", map[string]any{"shell_id": id}); got != "Killed background shell "+id {
		t.Errorf("session A's KillShell: %q", got)
	}
	sandboxtest.AssertNoProcs(t, marker, 5*time.Second)
}

// Item 5: with a GitHub token in .env, a binary search with Grep's count
// mode learns nothing: every probe prefix+c gets the same answer for
// every c, with and without --readonly.
func advGrepOracle(t *testing.T, d *advDaemon) {
	token := newGitHubToken()
	env := "APP_NAME=demo\nGITHUB_TOKEN=" + token + "\nDEBUG=true\n"
	ro := startAdv(t, d.tr, advOptions{args: []string{"--readonly"}})
	for _, x := range []struct {
		name string
		d    *advDaemon
	}{{"read-write", d}, {"readonly", ro}} {
		path := x.d.put(t, ".env", env)
		grep := func(args map[string]any) string { return must(t, x.d.cs, "Grep", args) }
		if got := must(t, x.d.cs, "Read", map[string]any{"file_path": ".env"}); got != "     1\tAPP_NAME=demo\n     2\tGITHUB_TOKEN=[REDACTED:github-token]\n     3\tDEBUG=true" {
			t.Errorf("%s: Read .env: %q", x.name, got)
		}
		// The file is searched: lines without the secret are found.
		if got := grep(map[string]any{"pattern": "DEBUG|APP_NAME", "output_mode": "count"}); got != path+":2" {
			t.Fatalf("%s: Grep of the ordinary lines: %q, want %q", x.name, got, path+":2")
		}
		for n := 4; n < 7; n++ {
			known := token[:n]
			first := ""
			for _, c := range alnum {
				got := grep(map[string]any{"pattern": known + string(c), "output_mode": "count"})
				if strings.Contains(got, token[4:10]) {
					t.Fatalf("%s: Grep shows the token: %q", x.name, got)
				}
				if first == "" {
					first = got
					if first != "No matches found" {
						t.Errorf("%s: Grep count %q = %q, want No matches found", x.name, known+string(c), got)
					}
					continue
				}
				if got != first {
					t.Fatalf("%s: Grep count %q = %q but %q = %q: the answer depends on the secret",
						x.name, known+string(c), got, known+string(alnum[0]), first)
				}
			}
		}
	}
}

// Item 6: ordinary code that names secrets is read back unchanged, and a
// Read → Write round trip of a file holding a real secret is refused
// rather than writing the redaction marker over it.
func advNoFalseRedactions(t *testing.T, d *advDaemon) {
	ordinary := []string{
		"token = strings.TrimSpace(token)",
		"self.password = password",
		`api_key = config["api_key"]`,
		"# Password: must be at least 12 characters, one of them a digit",
		"// Secret: rotate every 90 days, see the runbook",
		".sk-fading-circle-animation-wrapper { animation: fade 1.2s infinite; }",
		`password := os.Getenv("DB_PASSWORD")`,
		`const authHeader = "Authorization"`,
		"if secret == nil || len(secret.Data) == 0 {",
		"export function getToken(req) { return req.headers.authorization; }",
		"  client_secret: ${CLIENT_SECRET}",
		"The token is read from `$GITHUB_TOKEN` when the flag is not given.",
	}
	d.put(t, "ordinary.txt", strings.Join(ordinary, "\n")+"\n")
	got := must(t, d.cs, "Read", map[string]any{"file_path": "ordinary.txt"})
	lines := strings.Split(got, "\n")
	for i, want := range ordinary {
		w := strconv.Itoa(i+1) + "\t" + want
		if i >= len(lines) || strings.TrimLeft(lines[i], " ") != w {
			g := ""
			if i < len(lines) {
				g = lines[i]
			}
			t.Errorf("Read changed an ordinary line:\n got %q\nwant %q", g, w)
		}
	}

	ghp := newGitHubToken()
	content := "import os\n\nGITHUB_TOKEN = \"" + ghp + "\"\nDEBUG = True\n"
	file := d.put(t, "settings.py", content)
	read := must(t, d.cs, "Read", map[string]any{"file_path": "settings.py"})
	if !strings.Contains(read, "[REDACTED:github-token]") || strings.Contains(read, ghp) {
		t.Fatalf("Read of settings.py: %q", read)
	}
	var back []string
	for _, l := range strings.Split(read, "\n") {
		_, text, _ := strings.Cut(l, "\t")
		back = append(back, text)
	}
	msg := refused(t, d.cs, "Write", map[string]any{"file_path": "settings.py", "content": strings.Join(back, "\n") + "\n"})
	if !strings.Contains(msg, "would add 1 redaction marker like [REDACTED:kind]") {
		t.Errorf("Write of what Read showed: %q", msg)
	}
	msg = refused(t, d.cs, "Edit", map[string]any{"file_path": "settings.py",
		"old_string": "DEBUG = True", "new_string": "DEBUG = True\nBACKUP_TOKEN = \"[REDACTED:github-token]\""})
	if !strings.Contains(msg, "would add 1 redaction marker") {
		t.Errorf("Edit adding a marker: %q", msg)
	}
	if b, _ := os.ReadFile(file); string(b) != content {
		t.Fatalf("the refused writes changed settings.py: %q", b)
	}
	// Editing around the secret keeps it.
	must(t, d.cs, "Edit", map[string]any{"file_path": "settings.py", "old_string": "DEBUG = True", "new_string": "DEBUG = False"})
	if b, _ := os.ReadFile(file); string(b) != strings.Replace(content, "DEBUG = True", "DEBUG = False", 1) {
		t.Errorf("after an Edit around the secret, settings.py holds %q", b)
	}
}

// Item 7: Write and Edit refuse .git/config and .git/hooks, where a
// command planted runs on the host at the user's next git command.
func advGitWrites(t *testing.T, d *advDaemon) {
	const config = "[core]\n\trepositoryformatversion = 0\n\tbare = false\n"
	cfg := d.put(t, ".git/config", config)
	d.put(t, ".git/HEAD", "ref: refs/heads/main\n")
	if err := os.Symlink(".git", filepath.Join(d.ws, "gitlink")); err != nil {
		t.Fatal(err)
	}
	must(t, d.cs, "Read", map[string]any{"file_path": ".git/config"})
	const plant = "[core]\n\tfsmonitor = \"touch /tmp/adv-pwned\"\n"
	hook := "#!/bin/sh\ntouch /tmp/adv-pwned\n"
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"Write", map[string]any{"file_path": ".git/config", "content": plant}},
		{"Write", map[string]any{"file_path": filepath.Join(d.ws, ".git", "config"), "content": plant}},
		{"Edit", map[string]any{"file_path": ".git/config", "old_string": "bare = false", "new_string": "bare = false\n\tfsmonitor = \"touch /tmp/adv-pwned\""}},
		{"Write", map[string]any{"file_path": ".git/hooks/pre-commit", "content": hook}},
		{"Write", map[string]any{"file_path": "gitlink/hooks/pre-commit", "content": hook}},
		{"Write", map[string]any{"file_path": "./.git/../.git/hooks/post-checkout", "content": hook}},
	} {
		if msg := refused(t, d.cs, c.tool, c.args); !strings.Contains(msg, "inside a .git directory") {
			t.Errorf("%s(%v): %q; want it refused as inside .git", c.tool, c.args["file_path"], msg)
		}
	}
	if b, _ := os.ReadFile(cfg); string(b) != config {
		t.Errorf(".git/config was changed: %q", b)
	}
	if entries, err := os.ReadDir(filepath.Join(d.ws, ".git", "hooks")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf(".git/hooks was made: %v %v", entries, err)
	}
}

// vmHWM is a process's peak resident set, in bytes.
func vmHWM(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no VmHWM in /proc/%d/status", pid)
	return 0
}

// Item 8: Grep over a file of one 32 MiB line answers briefly, and
// sandboxd's peak RSS grows by less than twice the line.
func advGrepLongLine(t *testing.T, d *advDaemon) {
	const size = 32 << 20
	file := d.put(t, "one-line.min.js", "needle"+strings.Repeat("x", size-len("needle")))
	before := vmHWM(t, d.pid)
	got := must(t, d.cs, "Grep", map[string]any{"pattern": "needle", "output_mode": "content"})
	after := vmHWM(t, d.pid)
	t.Logf("sandboxd's peak RSS: %d MiB before, %d MiB after a Grep of a %d MiB line", before>>20, after>>20, size>>20)
	if len(got) > 4<<10 || !strings.HasPrefix(got, file+":1:needlexxx") || !strings.HasSuffix(got, "[... omitted end of long line]") {
		t.Errorf("Grep of a %d MiB line: %d bytes, %.100q ... %q", size>>20, len(got), got, got[max(0, len(got)-60):])
	}
	// Before the bound it grew by 4.5 times the line (145 MiB); now by a
	// few MiB.
	if after-before > 64<<20 {
		t.Errorf("Grep of a %d MiB line took sandboxd's peak RSS from %d to %d MiB", size>>20, before>>20, after>>20)
	}
	if got := must(t, d.cs, "Grep", map[string]any{"pattern": "needle", "output_mode": "count"}); got != file+":1" {
		t.Errorf("Grep count: %q", got)
	}
}

// advShim is sourced by every shell of item 9's daemon (BASH_ENV), nested
// shells included: should the denylist let a command through, a
// function of the same name runs instead of the real thing and says so.
const advShim = `for c in rm kill pkill killall shutdown reboot poweroff halt timeout; do
	eval "$c() { echo \"ADV-SHIM-RAN $c \$*\"; }"
done
adv_shim_probe() { echo ADV-SHIM-ACTIVE; }
`

// Item 9: the denylist sees through escapes, variables, wrappers and
// shell strings, and passes ordinary commands it used to refuse.
func advDenylist(t *testing.T, d *advDaemon) {
	// The shim must be in force, in nested shells too, before anything
	// the denylist might let through is tried.
	if got := d.bash(t, "adv_shim_probe; bash -c adv_shim_probe"); got != "ADV-SHIM-ACTIVE\nADV-SHIM-ACTIVE\n" {
		t.Fatalf("the safety shim is not in force (%q): the denylist attacks are not safe to run", got)
	}
	for _, cmd := range []string{
		`\rm -rf /`,
		`rm -rf "$HOME"`,
		`rm -rf ${HOME}`,
		`rm -rf /.`,
		`rm -rf //`,
		`kill -9 -1`,
		`kill -9 -01`,
		`bash -c 'shutdown now'`,
		`timeout -s KILL 5 reboot`,
		`pkill sandbox`,
	} {
		r := try(t, d.cs, "Bash", map[string]any{"command": cmd})
		if !r.isErr || !strings.HasPrefix(r.text, "refused: ") || !strings.Contains(r.text, "denylist") || strings.Contains(r.text, "ADV-SHIM-RAN") {
			t.Errorf("%s: %+v; want it refused by the denylist", cmd, r)
		}
	}
	// Ordinary commands that were refused.
	if got := d.bash(t, "kill -1 12345"); got != "ADV-SHIM-RAN kill -1 12345\n" {
		t.Errorf("kill -1 12345 (SIGHUP to one PID): %q; want it run", got)
	}
	p := d.put(t, "tools/mount", "#!/bin/sh\necho project mount script \"$@\"\n")
	if err := os.Chmod(p, 0o755); err != nil {
		t.Fatal(err)
	}
	if got := d.bash(t, "./tools/mount --dry-run"); got != "project mount script --dry-run\n" {
		t.Errorf("./tools/mount: %q; want the project's script run", got)
	}
}

// originRecorder sends the token and an Origin on every request, as a
// page's fetch does, and records each answer's
// Access-Control-Allow-Origin by method and path.
type originRecorder struct {
	token, origin string
	mu            *sync.Mutex
	acao          map[string]string
}

func (o originRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+o.token)
	r.Header.Set("Origin", o.origin)
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil {
		o.mu.Lock()
		o.acao[r.Method+" "+r.URL.Path] = resp.Header.Get("Access-Control-Allow-Origin")
		o.mu.Unlock()
	}
	return resp, err
}

// Item 10: a CORS preflight from an allowed origin is answered 204 with
// the CORS headers and no token; another origin gets 403; a client
// sending the allowed origin works and is told it may read the answers.
func advCORS(t *testing.T, d *advDaemon) {
	endpoints := []string{d.url}
	if d.tr == advSSE {
		endpoints = []string{d.sseURL, strings.TrimSuffix(d.sseURL, "/sse") + "/message"}
	}
	do := func(method, url, origin string, hdr map[string]string) *http.Response {
		req, err := http.NewRequest(method, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Origin", origin)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	preflight := map[string]string{"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization, content-type"}
	for _, url := range endpoints {
		resp := do(http.MethodOptions, url, advOrigin, preflight)
		if resp.StatusCode != http.StatusNoContent || resp.Header.Get("Access-Control-Allow-Origin") != advOrigin ||
			!strings.Contains(resp.Header.Get("Access-Control-Allow-Methods"), "POST") ||
			!strings.Contains(resp.Header.Get("Access-Control-Allow-Headers"), "Authorization") {
			t.Errorf("preflight of %s from %s: %d %v; want 204 with the CORS headers", url, advOrigin, resp.StatusCode, resp.Header)
		}
		for _, other := range []string{"http://127.0.0.1:2", "http://evil.example", "null"} {
			resp := do(http.MethodOptions, url, other, preflight)
			if resp.StatusCode != http.StatusForbidden || resp.Header.Get("Access-Control-Allow-Origin") != "" {
				t.Errorf("preflight of %s from %s: %d %v; want 403 without CORS headers", url, other, resp.StatusCode, resp.Header)
			}
		}
		// The preflight opens no door: the request itself needs the token.
		resp = do(http.MethodPost, url, advOrigin, map[string]string{"Content-Type": "application/json"})
		if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("Access-Control-Allow-Origin") != advOrigin {
			t.Errorf("POST to %s from %s without a token: %d %v; want 401, readable by the page", url, advOrigin, resp.StatusCode, resp.Header)
		}
	}
	// A real client from the allowed origin works; from another it cannot connect.
	endpoint := d.url
	if d.tr == advSSE {
		endpoint = d.sseURL
	}
	for _, origin := range []string{advOrigin, "http://evil.example"} {
		rec := originRecorder{token: d.token, origin: origin, mu: &sync.Mutex{}, acao: map[string]string{}}
		hc := &http.Client{Transport: rec}
		var ct mcp.Transport = &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc, MaxRetries: -1}
		if d.tr == advSSE {
			ct = &mcp.SSEClientTransport{Endpoint: endpoint, HTTPClient: hc}
		}
		// The SSE stream lives on this context: it must outlive the call.
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "page", Version: "0"}, nil).Connect(context.Background(), ct, nil)
		if origin != advOrigin {
			if err == nil {
				cs.Close()
				t.Errorf("a client from %s connected", origin)
			}
			continue
		}
		if err != nil {
			t.Fatalf("a client from the allowed origin: %v", err)
		}
		if got := must(t, cs, "Bash", map[string]any{"command": "echo from the page"}); got != "from the page\n" {
			t.Errorf("Bash from the allowed origin: %q", got)
		}
		cs.Close()
		rec.mu.Lock()
		defer rec.mu.Unlock()
		if len(rec.acao) == 0 {
			t.Fatal("no answer recorded")
		}
		for req, got := range rec.acao {
			if got != advOrigin {
				t.Errorf("the answer to %s from the allowed origin carried Access-Control-Allow-Origin %q, want %q", req, got, advOrigin)
			}
		}
		if d.tr == advSSE {
			t.Run("sse-stream-allow-origin", func(t *testing.T) {
				const stream = "GET /sse"
				got, ok := rec.acao[stream]
				if !ok {
					t.Fatalf("no answer to %s recorded: %v", stream, rec.acao)
				}
				if got != advOrigin {
					t.Errorf("the answer to %s carried Access-Control-Allow-Origin %q, want %q", stream, got, advOrigin)
				}
			})
		}
	}
}

// Item 11: a short token off loopback is refused at start, as bad
// input (exit 2), before anything is bound. The address is TEST-NET-1,
// which no host has: were the check missing, listening would fail
// rather than expose anything.
func advShortTokenOffLoopback(t *testing.T) {
	for _, token := range []string{"x", strings.Repeat("k", minRemoteToken-1)} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		cmd := exec.CommandContext(ctx, binary(t), "--addr", unassignable, "--token", token, "--workspace", t.TempDir())
		var stderr strings.Builder
		cmd.Stderr = &stderr
		err := cmd.Run()
		cancel()
		var xe *exec.ExitError
		if !errors.As(err, &xe) || xe.ExitCode() != 2 || !strings.Contains(stderr.String(), "at least 32 characters") {
			t.Errorf("--token of %d characters on %s: %v, stderr %q; want exit 2 saying at least 32 characters", len(token), unassignable, err, stderr.String())
		}
	}
}

// Item 12: an absolute symlink to a file inside the workspace is
// followed, one to the outside is not; a Write of a 100 KB path is
// refused and makes nothing.
func advSymlinksAndLongPaths(t *testing.T, d *advDaemon) {
	d.put(t, "target.txt", "inside target\n")
	if err := os.Symlink(filepath.Join(d.ws, "target.txt"), filepath.Join(d.ws, "abs-link")); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(d.base, "outside.txt")
	if err := os.WriteFile(outside, []byte("OUTSIDE-CONTENT\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(d.ws, "abs-out")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"abs-link", filepath.Join(d.ws, "abs-link")} {
		if got := must(t, d.cs, "Read", map[string]any{"file_path": p}); got != "     1\tinside target" {
			t.Errorf("Read(%s): %q", p, got)
		}
	}
	if got := must(t, d.cs, "Grep", map[string]any{"pattern": "target", "path": "abs-link", "output_mode": "content"}); got != filepath.Join(d.ws, "abs-link")+":1:inside target" {
		t.Errorf("Grep of abs-link: %q", got)
	}
	if msg := refused(t, d.cs, "Read", map[string]any{"file_path": "abs-out"}); !strings.Contains(msg, "outside the workspace") || strings.Contains(msg, "OUTSIDE-CONTENT") {
		t.Errorf("Read of an absolute symlink out: %q", msg)
	}

	before := listDir(t, d.ws)
	msg := refused(t, d.cs, "Write", map[string]any{"file_path": strings.Repeat("a/", 50000) + "f", "content": "x"})
	if !strings.Contains(msg, "is 100001 bytes long; a workspace path may be at most 4096") || len(msg) > 400 {
		t.Errorf("Write of a 100 KB path: %.400q", msg)
	}
	if after := listDir(t, d.ws); after != before {
		t.Errorf("the refused Write changed the workspace: %q, was %q", after, before)
	}
}

func listDir(t *testing.T, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return strings.Join(names, " ")
}

// Item 13: as another user, the agent cannot hard-link into the
// workspace a file outside it that the user cannot read
// (fs.protected_hardlinks), so the file tools, which follow a link as
// the file itself, never reach it.
func advHardLinks(t *testing.T, d *advDaemon) {
	if !d.runAs {
		proctest.HaveRoot(t, "hard links made as another user")
		t.Skip("as the same user, a hard link reaches only what that user could read anyway (docs/security.md)")
	}
	if b, _ := os.ReadFile("/proc/sys/fs/protected_hardlinks"); strings.TrimSpace(string(b)) != "1" {
		t.Skipf("fs.protected_hardlinks is %q, not 1: the kernel lets anyone link anything (documented)", strings.TrimSpace(string(b)))
	}
	secret := "HOST-ONLY-" + randomHex(8)
	outside := filepath.Join(d.base, "host-only.txt") // root's, 0600, beside the workspace on its file system
	if err := os.WriteFile(outside, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	got := d.bash(t, "ln "+outside+" hl-ln 2>&1; echo ln=$?; link "+outside+" hl-link 2>&1; echo link=$?; "+
		`python3 -c 'import os,sys; os.link(sys.argv[1], "hl-py")' `+outside+" 2>&1 | tail -1; echo py=${PIPESTATUS[0]}")
	for _, want := range []string{"ln=1", "link=1", "py=1"} {
		if !strings.Contains(got, want) {
			t.Errorf("want %s: the hard links were made? %q", want, got)
		}
	}
	for _, name := range []string{"hl-ln", "hl-link", "hl-py"} {
		if _, err := os.Lstat(filepath.Join(d.ws, name)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s exists: %v", name, err)
		}
		if r := try(t, d.cs, "Read", map[string]any{"file_path": name}); !r.isErr || strings.Contains(r.text, secret) {
			t.Errorf("Read(%s): %+v", name, r)
		}
	}
	if got := must(t, d.cs, "Grep", map[string]any{"pattern": "HOST-ONLY", "output_mode": "content"}); got != "No matches found" {
		t.Errorf("Grep for the outside file's content: %q", got)
	}
}
