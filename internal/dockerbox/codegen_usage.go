package dockerbox

import (
	"context"
	"encoding/json"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/altairalabs/promptkit-sandbox/internal/bounded"
	"github.com/altairalabs/promptkit-sandbox/internal/codegenimage"
	"github.com/altairalabs/promptkit-sandbox/plugin"
	"github.com/altairalabs/promptkit-sandbox/plugin/provision"
)

// What each sandbox uses now goes in its Details under the provision
// package's Usage keys, from the engine's one-shot stats; they are left
// out when the engine does not answer within usageTimeout.

// usageTimeout bounds the stats of one List: ls must answer even when
// the engine is slow.
const usageTimeout = 2 * time.Second

// withUsage adds what each sandbox of list uses now to its details,
// asking the engine for all of them at once.
func (p *CodegenProvider) withUsage(ctx context.Context, list []plugin.Provisioned) {
	ctx, cancel := context.WithTimeout(ctx, usageTimeout)
	defer cancel()
	usages := make([]map[string]string, len(list))
	var wg sync.WaitGroup
	for i := range list {
		got, _ := p.boxes.Get(list[i].ID)
		if b, ok := got.(*codegenBox); ok && b.ctr != nil {
			usages[i] = map[string]string{}
			wg.Go(func() { b.usage(ctx, usages[i]) })
		}
	}
	wg.Wait()
	for i, usage := range usages {
		for k, v := range usage {
			list[i].Details[k] = v
		}
	}
}

// usage fills into what the container uses now.
func (b *codegenBox) usage(ctx context.Context, into map[string]string) {
	res, err := b.ctr.cli.ContainerStats(ctx, b.ctr.id, client.ContainerStatsOptions{})
	if err != nil {
		return
	}
	defer res.Body.Close()
	var st container.StatsResponse
	if json.NewDecoder(res.Body).Decode(&st) != nil || st.Read.IsZero() {
		return
	}
	into[provision.UsageMemory] = strconv.FormatUint(st.MemoryStats.Usage, 10)
	if st.MemoryStats.Limit > 0 {
		into[provision.UsageMemoryMax] = strconv.FormatUint(st.MemoryStats.Limit, 10)
	}
	into[provision.UsagePids] = strconv.FormatUint(st.PidsStats.Current, 10)
	into[provision.UsageCPUSeconds] = strconv.FormatFloat(float64(st.CPUStats.CPUUsage.TotalUsage)/1e9, 'f', 3, 64)
	if b.set.tmpfs > 0 {
		into[provision.UsageWorkspaceMax] = strconv.FormatInt(b.set.tmpfs, 10)
	}
	// After the stats, so that du is not one of the pids counted. A
	// frozen container runs nothing, du included.
	if b.paused.Load() {
		return
	}
	if n, ok := b.workspaceUsage(ctx); ok {
		into[provision.UsageWorkspace] = strconv.FormatUint(n, 10)
	}
}

// workspaceUsage runs codegenimage.WorkspaceUsage in the container as
// the sandbox's user: the files the agent's commands see, whether the
// workspace is a host directory or a volume.
func (b *codegenBox) workspaceUsage(ctx context.Context) (uint64, bool) {
	ec, err := b.ctr.cli.ExecCreate(ctx, b.ctr.id, client.ExecCreateOptions{
		User: strconv.Itoa(b.set.uid) + ":" + strconv.Itoa(b.set.gid), Cmd: codegenimage.WorkspaceUsage, AttachStdout: true,
	})
	if err != nil {
		return 0, false
	}
	att, err := b.ctr.cli.ExecAttach(ctx, ec.ID, client.ExecAttachOptions{})
	if err != nil {
		return 0, false
	}
	defer att.Close()
	stop := context.AfterFunc(ctx, func() { _ = att.Conn.Close() })
	defer stop()
	out := bounded.Tail{Max: 4 << 10}
	if _, err := stdcopy.StdCopy(&out, io.Discard, att.Reader); err != nil {
		return 0, false
	}
	return codegenimage.ParseWorkspaceUsage(string(out.Bytes()))
}
