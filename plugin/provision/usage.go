package provision

// The keys of a listed sandbox's Details that say what it uses now,
// when the List asked for usage (plugin.ListOptions.Usage): its memory
// in bytes (the page cache of its tmpfs included) and the limit on it,
// its processes, and the CPU time it has used since it started, in
// seconds. A provider that cannot tell one leaves it out. serve exports
// them on /metrics.
const (
	UsageMemory     = "usage.memory_bytes"
	UsageMemoryMax  = "usage.memory_limit_bytes"
	UsagePids       = "usage.pids"
	UsageCPUSeconds = "usage.cpu_seconds"
)
