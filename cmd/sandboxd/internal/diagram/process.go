package diagram

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
	"github.com/altairalabs/promptkit-sandbox/shared/shell"
)

// maxWarnings caps the stderr passed on to the agent.
const maxWarnings = 4 << 10

// output is what a renderer process produced.
type output struct {
	data     []byte
	warnings string // its stderr, capped
}

// runRenderer runs path with args in an empty private directory (also
// its HOME: relative names in a source resolve there, never in a
// workspace) and an environment of env alone, source on its stdin. It
// is killed with its process group at the time limit; its address space
// and its output are capped.
func runRenderer(ctx context.Context, lim Limits, path string, args, env []string, source string) (output, error) {
	dir, err := os.MkdirTemp("", "sandboxd-diagram-")
	if err != nil {
		return output{}, fmt.Errorf("private directory: %w", err)
	}
	defer os.RemoveAll(dir)
	env = append(env, "HOME="+dir, "XDG_CACHE_HOME="+dir, "LANG=C.UTF-8")
	stdin, feed := io.Pipe()
	defer stdin.Close()
	p, err := shell.Start(ctx, sandbox.Request{Command: path, Args: args, Env: env}, shell.Options{
		Dir:         dir,
		Timeout:     lim.Timeout,
		KillGrace:   -1,
		OutputLimit: lim.Output,
		CleanEnv:    true,
		StdinReader: stdin,
		Uncontained: true,
	})
	if err != nil {
		feed.Close()
		return output{}, err
	}
	// The memory limit is set before the process has its source: until
	// then it has allocated nothing the source could inflate (a PNG at a
	// huge dpi would otherwise claim gigabytes for its surface).
	if err := limitMemory(p.Pid(), lim.Memory); err != nil {
		feed.Close()
		p.Stop()
		p.Wait()
		return output{}, fmt.Errorf("memory limit: %w", err)
	}
	go func() {
		io.Copy(feed, strings.NewReader(source))
		feed.Close()
	}()
	resp, err := p.Wait()
	out := output{data: resp.Stdout, warnings: warningsOf(resp.Stderr)}
	switch {
	case sandbox.KindOf(err) == sandbox.KindTimeout || errors.Is(ctx.Err(), context.DeadlineExceeded):
		return out, timedOut(lim)
	case resp.StdoutTruncated:
		return out, &LimitError{What: "image", Limit: fmt.Sprintf("%d bytes", lim.Output)}
	case err != nil && strings.Contains(out.warnings, "out of memory"):
		return out, &LimitError{What: "memory", Limit: fmt.Sprintf("%d MiB", lim.Memory>>20)}
	case err != nil && out.warnings != "":
		return out, fmt.Errorf("%w:\n%s", err, out.warnings)
	case err != nil:
		return out, err
	case len(out.data) == 0:
		return out, fmt.Errorf("rendered nothing:\n%s", out.warnings)
	}
	return out, nil
}

func warningsOf(stderr []byte) string {
	s := strings.TrimSpace(string(stderr))
	if len(s) > maxWarnings {
		s = s[:maxWarnings] + "\n[warnings truncated]"
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}
