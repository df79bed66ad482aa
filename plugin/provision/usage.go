package provision

// The keys of a listed sandbox's Details that say what it uses now,
// when the List asked for usage (plugin.ListOptions.Usage): its memory
// in bytes (the page cache of its tmpfs included) and the limit on it,
// its processes, the CPU time it has used since it started, in
// seconds, and the disk its workspace's files take, in bytes, and the
// limit on that where the provider sets one. A provider that cannot
// tell one leaves it out. serve exports them on /metrics.
const (
	UsageMemory       = "usage.memory_bytes"
	UsageMemoryMax    = "usage.memory_limit_bytes"
	UsagePids         = "usage.pids"
	UsageCPUSeconds   = "usage.cpu_seconds"
	UsageWorkspace    = "usage.workspace_bytes"
	UsageWorkspaceMax = "usage.workspace_limit_bytes"
)
