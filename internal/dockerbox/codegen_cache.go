package dockerbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/client"

	"github.com/altairalabs/promptkit-sandbox/internal/codegenimage"
	"github.com/altairalabs/promptkit-sandbox/shared/sandbox"
)

// Labels of a codegen cache volume, besides LabelPlugin, LabelHost and
// LabelMode (and, for a volume of one sandbox, LabelID and LabelPID).
const (
	LabelKind      = "org.promptkit.sandbox.kind"      // KindCache
	LabelWorkspace = "org.promptkit.sandbox.workspace" // the host workspace it caches for
	LabelCache     = "org.promptkit.sandbox.cache"     // its scope: workspace or sandbox
	KindCache      = "cache"
)

// CacheVolumePrefix starts the name of every codegen cache volume.
const CacheVolumePrefix = "promptkit-codegen-cache-"

// The values of the cache key: where GOCACHE and GOMODCACHE live.
const (
	// cacheWorkspace keeps a volume per workspace across its sandboxes;
	// only `codegen down --purge` removes it.
	cacheWorkspace = "workspace"
	// cacheSandbox gives the sandbox a volume of its own, removed on
	// Release.
	cacheSandbox = "sandbox"
	// cacheNone mounts no volume: the caches live on the container's
	// tmpfs /tmp and die with it.
	cacheNone = "none"
)

var cacheValues = []string{cacheWorkspace, cacheSandbox, cacheNone}

// Where the caches go inside the volume.
var cacheEnv = []string{
	"GOCACHE=" + codegenimage.CacheDir + "/go-build",
	"GOMODCACHE=" + codegenimage.CacheDir + "/go-mod",
}

// cacheVolumeName is the volume of workspace (an absolute, resolved host
// path): the prefix and the first 16 hex digits of its SHA-256, so one
// workspace always finds its own volume and a name says nothing of the
// path. A volume of one sandbox adds its id, so that two sandboxes of
// one workspace never share (or remove) it.
func cacheVolumeName(workspace, scope, sandboxID string) string {
	sum := sha256.Sum256([]byte(workspace))
	name := CacheVolumePrefix + hex.EncodeToString(sum[:])[:16]
	if scope == cacheSandbox {
		name += "-" + sandboxID
	}
	return name
}

// cacheVolume is the build cache volume a sandbox mounts at
// codegenimage.CacheDir.
type cacheVolume struct {
	cli   *client.Client
	name  string
	scope string
}

// makeCacheVolume creates the volume of workspace for sandbox id, or
// finds the one an earlier sandbox of the workspace left (the engine
// answers a create of an existing name with that volume). One labelled
// for another workspace is refused rather than shared.
func makeCacheVolume(ctx context.Context, cli *client.Client, workspace, scope, id string) (*cacheVolume, error) {
	name := cacheVolumeName(workspace, scope, id)
	lbl := map[string]string{
		LabelPlugin:    PluginName,
		LabelHost:      hostname(),
		LabelMode:      CodegenMode,
		LabelKind:      KindCache,
		LabelCache:     scope,
		LabelWorkspace: workspace,
	}
	if scope == cacheSandbox {
		// Only a volume of one sandbox belongs to this process: one of a
		// workspace outlives it by design.
		lbl[LabelPID] = strconv.Itoa(os.Getpid())
		lbl[LabelID] = id
	}
	v := &cacheVolume{cli: cli, name: name, scope: scope}
	got, err := cli.VolumeCreate(ctx, client.VolumeCreateOptions{Name: name, Labels: lbl})
	if err != nil {
		if scope == cacheSandbox {
			// The engine may have made it after ctx ended; its name is
			// this sandbox's alone.
			_ = v.remove(ctx)
		}
		return nil, provisionErr(ctx, cli, "create cache volume "+name, err)
	}
	if w := got.Volume.Labels[LabelWorkspace]; w != workspace || got.Volume.Labels[LabelKind] != KindCache {
		return nil, sandbox.Errorf(sandbox.KindStart, "%s: cache volume %s exists and is not this workspace's (labelled for %q); remove it or set cache: none", CodegenMode, name, w)
	}
	return v, nil
}

// bind is the volume's mount, as HostConfig.Binds takes it: a named
// volume, so the engine copies the image's CacheDir (empty, 1777) onto
// it when it is new.
func (v *cacheVolume) bind() string { return v.name + ":" + codegenimage.CacheDir + ":rw" }

// remove deletes the volume; one already gone is no error. The
// container that mounted it must be gone first: the engine refuses to
// remove a volume in use, which is how a workspace's volume that another
// of its sandboxes still mounts is kept.
//
// The engine stops answering for a removed container a moment before it
// lets go of the container's volumes, so a refusal right after the
// removal is retried for a while: the whole cleanup budget for a volume
// of one sandbox (nothing else mounts it, so the refusal can only be
// that moment), a short grace for a workspace's.
func (v *cacheVolume) remove(ctx context.Context) error {
	grace := inUseGrace
	if v.scope == cacheSandbox {
		grace = cleanupTimeout
	}
	err := removeVolume(ctx, v.cli, v.name, grace)
	if errors.Is(err, errVolumeBusy) {
		return fmt.Errorf("%s: cache volume %s is in use by another sandbox of the workspace; not removed: %w", CodegenMode, v.name, err)
	}
	if err != nil {
		return fmt.Errorf("%s: remove cache volume %s: %w", CodegenMode, v.name, err)
	}
	return nil
}

// errVolumeBusy is a volume the engine still refused to remove as in use
// once the grace was over.
var errVolumeBusy = errors.New("in use")

// removeVolume deletes the volume name; one already gone is no error. A
// refusal as in use is retried for grace (see cacheVolume.remove), then
// is errVolumeBusy.
func removeVolume(ctx context.Context, cli *client.Client, name string, grace time.Duration) error {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	deadline := time.Now().Add(grace)
	for {
		_, err := cli.VolumeRemove(rctx, name, client.VolumeRemoveOptions{})
		inUse := err != nil && (cerrdefs.IsConflict(err) || strings.Contains(err.Error(), "in use"))
		switch {
		case err == nil || cerrdefs.IsNotFound(err):
			return nil
		case inUse && time.Now().Before(deadline) && rctx.Err() == nil:
			select {
			case <-rctx.Done():
			case <-time.After(inUseRetry):
			}
			continue
		case inUse:
			return fmt.Errorf("%w: %w", errVolumeBusy, err)
		default:
			return err
		}
	}
}

// inUseGrace is how long a workspace's volume refused as in use is
// retried; inUseRetry, how often.
const (
	inUseGrace = time.Second
	inUseRetry = 50 * time.Millisecond
)

// RemoveStaleCacheVolumes removes the `cache: sandbox` volumes a plugin
// process on this machine made and left behind when it died (the
// engine's AutoRemove takes anonymous volumes only): those labelled
// LabelCache=sandbox, with LabelHost naming this machine and LabelPID a
// process that no longer exists. Run it after RemoveStale, which removes
// the containers that mounted them. Volumes kept for a workspace carry
// no PID and are never judged. It returns the names it removed.
func RemoveStaleCacheVolumes(ctx context.Context) ([]string, error) {
	cli, err := newClient()
	if err != nil {
		return nil, err
	}
	defer cli.Close()
	return removeStaleCacheVolumes(ctx, cli, processExists)
}

func removeStaleCacheVolumes(ctx context.Context, cli *client.Client, alive func(pid int) bool) ([]string, error) {
	list, err := cli.VolumeList(ctx, client.VolumeListOptions{
		Filters: make(client.Filters).Add("label", LabelPlugin+"="+PluginName).Add("label", LabelHost+"="+hostname()).
			Add("label", LabelKind+"="+KindCache).Add("label", LabelCache+"="+cacheSandbox),
	})
	if err != nil {
		if isConnErr(err) {
			return nil, unreachable(cli, err)
		}
		return nil, fmt.Errorf("list cache volumes: %w", err)
	}
	var removed []string
	var errs []error
	for _, v := range list.Items {
		pid, err := strconv.Atoi(v.Labels[LabelPID])
		if err != nil || pid <= 0 || alive(pid) {
			continue
		}
		if err := (&cacheVolume{cli: cli, name: v.Name}).remove(ctx); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, v.Name)
	}
	return removed, errors.Join(errs...)
}
