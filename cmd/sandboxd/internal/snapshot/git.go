package snapshot

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"
)

// gitConfig is set on every git command. Together with a scrubbed
// environment it leaves nothing to the workspace or the host: no
// fsmonitor or hook runs, no line-ending or other conversion changes a
// file's bytes, and no path is refused for another OS's sake.
var gitConfig = []string{
	"core.fsmonitor=false",
	"core.hooksPath=/dev/null",
	"core.excludesFile=/dev/null",
	"core.attributesFile=/dev/null",
	"core.autocrlf=false",
	"core.safecrlf=false",
	"core.eol=lf",
	"core.symlinks=true",
	"core.fileMode=true",
	"core.trustctime=true",
	"core.checkStat=default",
	"core.protectNTFS=false",
	"core.protectHFS=false",
	"core.untrackedCache=false",
	"core.splitIndex=false",
	"core.quotePath=false",
	"core.looseCompression=1",
	"core.logAllRefUpdates=false",
	"gc.auto=0",
	"index.version=4",
	"safe.directory=*",
	"user.name=sandboxd",
	"user.email=sandboxd@localhost",
}

// gitAttributes is the store's info/attributes, which outranks every
// .gitattributes in the workspace: bytes go in and out as they are.
const gitAttributes = "* -text -eol -crlf -ident -filter -working-tree-encoding -diff -merge\n"

// git runs git on the store's repository, its index and the workspace.
type git struct {
	path     string // the git binary
	gitDir   string
	index    string
	workTree string
	home     string
}

// env is all git gets: none of sandboxd's GIT_* variables (a GIT_DIR
// would send it elsewhere), no global or system config.
func (g *git) env() []string {
	return []string{
		"PATH=/usr/local/bin:/usr/bin:/bin",
		"HOME=" + g.home,
		"LC_ALL=C",
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_ATTR_NOSYSTEM=1",
		"GIT_TERMINAL_PROMPT=0",
		"GIT_NO_REPLACE_OBJECTS=1",
		"GIT_INDEX_FILE=" + g.index,
	}
}

func (g *git) command(ctx context.Context, args ...string) *exec.Cmd {
	full := make([]string, 0, 2*len(gitConfig)+len(args)+2)
	for _, c := range gitConfig {
		full = append(full, "-c", c)
	}
	full = append(full, "--git-dir="+g.gitDir)
	if args[0] != "init" {
		full = append(full, "--work-tree="+g.workTree)
	}
	full = append(full, args...)
	cmd := exec.CommandContext(ctx, g.path, full...)
	cmd.Env = g.env()
	cmd.Dir = g.home
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// run runs git with stdin and returns its stdout; a failure carries its
// stderr.
func (g *git) run(ctx context.Context, stdin io.Reader, args ...string) ([]byte, error) {
	out, _, err := g.runErr(ctx, stdin, args...)
	return out, err
}

// runErr is run that returns stderr too, for commands that report on it.
func (g *git) runErr(ctx context.Context, stdin io.Reader, args ...string) ([]byte, []byte, error) {
	cmd := g.command(ctx, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if len(msg) > 2000 {
			msg = msg[:2000] + "..."
		}
		return nil, stderr.Bytes(), fmt.Errorf("git %s: %w: %s", args[0], err, msg)
	}
	return stdout.Bytes(), stderr.Bytes(), nil
}

// nulSplit splits git's -z output into its fields.
func nulSplit(b []byte) []string {
	if len(b) == 0 {
		return nil
	}
	return strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
}

// nulJoin is paths as git's --stdin -z reads them.
func nulJoin(paths []string) *bytes.Reader {
	var b bytes.Buffer
	for _, p := range paths {
		b.WriteString(p)
		b.WriteByte(0)
	}
	return bytes.NewReader(b.Bytes())
}
