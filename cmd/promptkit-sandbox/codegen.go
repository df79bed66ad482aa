package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/altairalabs/promptkit-sandbox/codegen"
	"github.com/altairalabs/promptkit-sandbox/internal/execrelay"
	"github.com/altairalabs/promptkit-sandbox/plugin"
	"github.com/altairalabs/promptkit-sandbox/plugin/provision"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// codegen hands out codegen sandboxes: MCP endpoints served by a
// provider mode of a plugin (docker_codegen).
//
// The sandbox lives in the plugin process that provisioned it (its port
// forwarder is there), so whoever started that process must keep it
// running. up therefore hands the sandbox to a running serve of the same
// config when there is one, and returns; without one it holds the
// sandbox itself, in the foreground, until Ctrl-C releases it.
func (e *cliEnv) codegen(args []string) int {
	if len(args) == 0 {
		e.errorf("codegen: want a subcommand: up, ls, down, pause, resume, fork or images")
		return exitUsage
	}
	switch args[0] {
	case "up":
		return e.codegenUp(args[1:])
	case "ls", "list":
		return e.codegenList(args[1:])
	case "down":
		return e.codegenDown(args[1:])
	case "pause":
		return e.codegenPause(args[1:], true)
	case "resume":
		return e.codegenPause(args[1:], false)
	case "fork":
		return e.codegenFork(args[1:])
	case "images":
		return e.codegenImages(args[1:])
	}
	e.errorf("codegen: unknown subcommand %q (want up, ls, down, pause, resume, fork or images)", args[0])
	return exitUsage
}

// upReport is what up prints with --json: one line, once the sandbox
// answers.
type upReport struct {
	plugin.Provisioned
	// HeldBy is "foreground" (this process; Ctrl-C releases) or "serve"
	// (the serve on Socket; codegen down releases).
	HeldBy  string          `json:"held_by"`
	Socket  string          `json:"socket,omitempty"`
	MCPJSON json.RawMessage `json:"mcp_json"`
}

func (e *cliEnv) codegenUp(args []string) int {
	var common commonFlags
	fs := newFlagSet("codegen up", e.stderr, &common)
	cfgPath := fs.String("config", "", "RuntimeConfig YAML file declaring the sandbox (required)")
	name := fs.String("sandbox", "", "the sandbox to provision, of a provider mode such as docker_codegen (required)")
	workspace := fs.String("workspace", "", "the directory the agent works on (default: the sandbox's workspace key, else an empty one the provider makes)")
	volume := fs.String("workspace-volume", "", "a named workspace volume the agent works on instead: created on first use, kept after down (unless --purge), reattached by the next up naming it (docker_codegen: an engine volume; kubectl_codegen: a PersistentVolumeClaim)")
	asJSON := fs.Bool("json", false, "print one JSON object instead of text")
	socket := fs.String("socket", "", "the serve to hand the sandbox to (default: $"+execrelay.EnvSocket+", else "+execrelay.DefaultSocket(os.Getenv)+")")
	foreground := fs.Bool("foreground", false, "hold the sandbox in this process even when a serve is running")
	timeout := fs.Duration("timeout", plugin.DefaultProvisionTimeout, "how long provisioning may take")
	extra, ok, code := parseInterspersed(fs, args)
	if !ok {
		return code
	}
	if len(extra) > 0 || *cfgPath == "" || *name == "" {
		e.errorf("usage: promptkit-sandbox codegen up --config FILE --sandbox NAME [--workspace DIR | --workspace-volume NAME] [--json]")
		return exitUsage
	}
	if *workspace != "" && *volume != "" {
		e.errorf("codegen up: --workspace and --workspace-volume exclude each other")
		return exitUsage
	}
	cfg, err := canonicalConfig(*cfgPath)
	if err != nil {
		e.errorf("codegen up: config: %v", err)
		return exitUsage
	}
	if *workspace != "" {
		if *workspace, err = filepath.Abs(*workspace); err != nil {
			e.errorf("codegen up: workspace: %v", err)
			return exitUsage
		}
	}
	log, err := common.logger(e.stderr)
	if err != nil {
		e.errorf("%v", err)
		return exitUsage
	}
	ctx, stop := interruptible()
	defer stop()

	// Only --socket insists on a serve: the environment's socket, like
	// the default, is where one would be, and without one up holds the
	// sandbox itself.
	path, _ := execrelay.Socket(*socket, os.Getenv)
	explicit := *socket != ""
	if !*foreground {
		conn, err := dialServe(ctx, path)
		if err == nil {
			code, handled := e.upServed(ctx, log, conn, path, cfg, *name, place{*workspace, *volume}, *timeout, *asJSON, explicit)
			if handled {
				return code
			}
		} else if explicit {
			e.errorf("codegen up: %v (start one with: promptkit-sandbox serve --config %s --socket %s, or use --foreground)", err, cfg, path)
			return exitSandbox
		}
	}
	return e.upForeground(ctx, log, &common, *cfgPath, *name, place{*workspace, *volume}, *timeout, *asJSON)
}

// place is where the agent works: a host directory, or a workspace
// volume; both empty: the sandbox's own.
type place struct{ workspace, volume string }

// upServed provisions through the serve at the other end of conn.
// handled is false when that serve does not serve this config and the
// socket was only the default guess: up then runs in the foreground.
func (e *cliEnv) upServed(ctx context.Context, log hclog.Logger, conn net.Conn, path, cfg, name string, at place, timeout time.Duration, asJSON, explicit bool) (code int, handled bool) {
	cc, err := grpcOver(conn, path)
	if err != nil {
		_ = conn.Close()
		e.errorf("codegen up: serve on %s: %v", path, err)
		return exitSandbox, true
	}
	defer cc.Close()
	client := plugin.NewClient(cc)
	d, err := client.Describe(ctx)
	if err != nil {
		e.errorf("codegen up: serve on %s: %v", path, err)
		return exitSandbox, true
	}
	mode := servedMode(cfg, name)
	served := false
	for _, m := range d.Modes {
		if m.Name == mode && m.Provider {
			served = true
		}
	}
	if !served {
		if !explicit {
			log.Debug("the serve on the default socket does not provide this sandbox: holding it in the foreground", "socket", path, "mode", mode)
			return 0, false
		}
		e.errorf("codegen up: the serve on %s does not provide sandbox %s of %s (a serve of another config, or not a provider mode)", path, name, cfg)
		return exitUsage, true
	}
	tp, flushSpans := startTracing("promptkit-sandbox", log)
	defer flushSpans()
	traced, end := codegen.TraceProvision(ctx, tp, name, mode)
	p, err := client.Provision(traced, plugin.ProvisionSpec{Name: name, Mode: mode, Workspace: at.workspace, WorkspaceVolume: at.volume}, timeout)
	end(err)
	if err != nil {
		e.errorf("codegen up: serve on %s: %v", path, err)
		return provisionExitCode(err), true
	}
	if err := e.printUp(p, "serve", path, asJSON); err != nil {
		e.errorf("codegen up: %v", err)
		return exitSandbox, true
	}
	return exitOK, true
}

// upForeground provisions in this process and holds the sandbox until
// SIGINT or SIGTERM, then releases it; if the plugin process or the
// sandbox dies first, up says so (and why) and exits 125.
func (e *cliEnv) upForeground(ctx context.Context, log hclog.Logger, common *commonFlags, cfgPath, name string, at place, timeout time.Duration, asJSON bool) int {
	tp, flushSpans := startTracing("promptkit-sandbox", log)
	defer flushSpans()
	sb, err := codegen.Up(ctx, cfgPath, name, codegen.Options{Host: hostOptions(common, log, "", nil), Workspace: at.workspace, WorkspaceVolume: at.volume,
		Timeout: timeout, TracerProvider: tp})
	if err != nil {
		e.errorf("codegen up: %v", err)
		return provisionExitCode(err)
	}
	if err := e.printUp(sb.Provisioned, "foreground", "", asJSON); err != nil {
		e.errorf("codegen up: %v", err)
	}
	select {
	case <-ctx.Done():
	case <-sb.Lost():
		e.errorf("codegen up: sandbox %s (%s) is gone: %s", sb.Name, sb.ID, sb.Why())
		_ = sb.Close()
		return exitSandbox
	}
	start := time.Now()
	if err := sb.Close(); err != nil {
		e.errorf("codegen up: release %s: %v", sb.ID, err)
		return exitSandbox
	}
	log.Info("released", "id", sb.ID, "elapsed", time.Since(start).Round(time.Millisecond))
	return exitOK
}

// provisionExitCode: 125 when the sandbox could not start or its engine
// was unreachable, 124 on a timeout, 2 for a config that is wrong.
func provisionExitCode(err error) int {
	switch sandbox.KindOf(err) {
	case sandbox.KindTimeout:
		return exitTimeout
	case sandbox.KindStart, sandbox.KindTransport:
		return exitSandbox
	}
	return openFailureCode(err)
}

func (e *cliEnv) printUp(p plugin.Provisioned, heldBy, socket string, asJSON bool) error {
	snippet, err := codegen.MCPConfig(p.Name, p)
	if err != nil {
		return err
	}
	if asJSON {
		// Marshal compacts the raw message onto the one line.
		b, err := json.Marshal(upReport{Provisioned: p, HeldBy: heldBy, Socket: socket, MCPJSON: snippet})
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "%s\n", b)
		return nil
	}
	w := e.stdout
	fmt.Fprintf(w, "codegen sandbox %s is up (id %s, mode %s)\n", p.Name, p.ID, p.Mode)
	if p.WorkspaceVolume != "" {
		fmt.Fprintf(w, "  Workspace:    volume %s (kept after down; down --purge removes it)\n", p.WorkspaceVolume)
	} else {
		fmt.Fprintf(w, "  Workspace:    %s\n", p.Workspace)
	}
	if img := p.Details["image"]; img != "" {
		fmt.Fprintf(w, "  Image:        %s\n", imageLine(p.Details))
	}
	fmt.Fprintf(w, "  MCP endpoint: %s\n", p.Endpoint)
	fmt.Fprintf(w, "  Token:        %s\n", p.Token)
	fmt.Fprintf(w, "  .mcp.json:\n%s\n", indent(string(snippet), "  "))
	if heldBy == "serve" {
		fmt.Fprintf(w, "Held by the serve on %s; release it with: promptkit-sandbox codegen down %s\n", socket, p.ID)
	} else {
		fmt.Fprintln(w, "Held by this process: Ctrl-C releases it.")
	}
	return nil
}

// imageLine says which image runs, what it serves and why it was chosen.
func imageLine(d map[string]string) string {
	s := d["image"]
	var why []string
	if l := d["languages"]; l != "" {
		why = append(why, "serves "+l)
	}
	switch by := d["image_by"]; by {
	case "":
	case "detected", "default":
		if det := d["detected"]; det != "" {
			by += ": " + det
		}
		why = append(why, "chosen by "+by)
	default:
		why = append(why, "chosen by the "+by+" key")
	}
	if len(why) > 0 {
		s += " (" + strings.Join(why, "; ") + ")"
	}
	return s
}

func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}

// serveClient connects to the serve that ls and down talk to.
func (e *cliEnv) serveClient(ctx context.Context, cmd, socket string) (*plugin.Client, func(), string, int) {
	path, _ := execrelay.Socket(socket, os.Getenv)
	conn, err := dialServe(ctx, path)
	if err != nil {
		if errors.Is(err, execrelay.ErrNoServe) {
			e.errorf("%s: %v: sandboxes of a foreground codegen up are held by that process (Ctrl-C releases them)", cmd, err)
		} else {
			e.errorf("%s: %v", cmd, err)
		}
		return nil, nil, path, exitSandbox
	}
	cc, err := grpcOver(conn, path)
	if err != nil {
		_ = conn.Close()
		e.errorf("%s: serve on %s: %v", cmd, path, err)
		return nil, nil, path, exitSandbox
	}
	return plugin.NewClient(cc), func() { _ = cc.Close() }, path, exitOK
}

func (e *cliEnv) codegenList(args []string) (code int) {
	var common commonFlags
	fs := newFlagSet("codegen ls", e.stderr, &common)
	socket := fs.String("socket", "", "the serve to ask (default: $"+execrelay.EnvSocket+", else "+execrelay.DefaultSocket(os.Getenv)+")")
	asJSON := fs.Bool("json", false, "print the sandboxes as a JSON array")
	volumes := fs.Bool("volumes", false, "list the workspace volumes the plugins keep instead of the sandboxes")
	extra, ok, code := parseInterspersed(fs, args)
	if !ok {
		return code
	}
	if len(extra) > 0 {
		e.errorf("usage: promptkit-sandbox codegen ls [--socket PATH] [--volumes] [--json]")
		return exitUsage
	}
	ctx, stop := interruptible()
	defer stop()
	client, done, path, code := e.serveClient(ctx, "codegen ls", *socket)
	if code != exitOK {
		return code
	}
	defer done()
	// Usage costs the engine a stats call per sandbox: only a list of
	// sandboxes shows it.
	list, err := client.List(ctx, plugin.ListOptions{Usage: !*volumes})
	if err != nil {
		e.errorf("codegen ls: serve on %s: %v", path, err)
		return exitSandbox
	}
	// A partial listing is printed, then said to be partial: what could
	// not be listed, and a status that is not success.
	defer func() {
		for _, w := range list.Warnings {
			e.errorf("codegen ls: not listed: %s", w)
		}
		if len(list.Warnings) > 0 && code == exitOK {
			code = exitSandbox
		}
	}()
	switch {
	case *asJSON && *volumes:
		printJSON(e.stdout, list.Volumes)
	case *asJSON:
		// The array it has always been, so that scripts reading it keep
		// working: the volumes are --volumes --json.
		printJSON(e.stdout, list.Sandboxes)
	case *volumes:
		printVolumes(e.stdout, list.Volumes)
	default:
		printList(e.stdout, list.Sandboxes)
		if len(list.Volumes) > 0 {
			fmt.Fprintln(e.stdout)
			printVolumes(e.stdout, list.Volumes)
		}
	}
	return exitOK
}

// printJSON prints items as one JSON array, [] for none.
func printJSON[T any](w io.Writer, items []T) {
	if items == nil {
		items = []T{}
	}
	b, _ := json.Marshal(items)
	fmt.Fprintf(w, "%s\n", b)
}

// printVolumes lists the workspace volumes kept.
func printVolumes(w io.Writer, vols []plugin.WorkspaceVolume) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "WORKSPACE VOLUME\tMODE\tATTACHED TO\tAGE")
	for _, v := range vols {
		by, age := v.Sandbox, "-"
		if by == "" {
			by = "-"
		}
		if !v.Created.IsZero() {
			age = time.Since(v.Created).Round(time.Second).String()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", v.Name, v.Mode, by, age)
	}
	_ = tw.Flush()
}

func printList(w io.Writer, list []plugin.Provisioned) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSANDBOX\tMODE\tSTATE\tENDPOINT\tWORKSPACE\tAGE")
	for _, p := range list {
		ws := p.Workspace
		if p.WorkspaceVolume != "" {
			ws = "volume " + p.WorkspaceVolume
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p.ID, p.Name, p.Mode, listState(p), p.Endpoint, ws, time.Since(p.Created).Round(time.Second))
	}
	_ = tw.Flush()
	for _, p := range list {
		if why, dead := strings.CutPrefix(p.Details[provision.State], provision.StateDead); dead {
			fmt.Fprintf(w, "%s is dead: %s (release it with: promptkit-sandbox codegen down %s)\n", p.ID, why, p.ID)
		}
	}
}

// listState is the STATE column: running, paused, dead (why follows the table),
// or "-" for a provider that cannot tell.
func listState(p plugin.Provisioned) string {
	switch st := p.Details[provision.State]; {
	case st == "":
		return "-"
	case strings.HasPrefix(st, provision.StateDead):
		return "dead"
	default:
		return st
	}
}

func (e *cliEnv) codegenDown(args []string) int {
	var common commonFlags
	fs := newFlagSet("codegen down", e.stderr, &common)
	socket := fs.String("socket", "", "the serve holding the sandbox (default: $"+execrelay.EnvSocket+", else "+execrelay.DefaultSocket(os.Getenv)+")")
	purge := fs.Bool("purge", false, "also remove what is kept for the workspace's next sandbox (its workspace volume; docker_codegen: its build cache volume too)")
	ids, ok, code := parseInterspersed(fs, args)
	if !ok {
		return code
	}
	if len(ids) != 1 {
		e.errorf("usage: promptkit-sandbox codegen down ID [--socket PATH] [--purge]")
		return exitUsage
	}
	id := ids[0]
	ctx, stop := interruptible()
	defer stop()
	client, done, path, code := e.serveClient(ctx, "codegen down", *socket)
	if code != exitOK {
		return code
	}
	defer done()
	if err := client.Release(ctx, id, plugin.ReleaseOptions{Purge: *purge}); err != nil {
		e.errorf("codegen down: serve on %s: %v", path, err)
		if errors.Is(err, plugin.ErrNotProvisioned) {
			return exitUsage
		}
		return exitSandbox
	}
	fmt.Fprintf(e.stdout, "released %s\n", id)
	return exitOK
}
