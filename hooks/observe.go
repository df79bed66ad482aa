package hooks

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"go.opentelemetry.io/otel/trace"
)

const (
	defaultObserveConcurrency = 4
	defaultObserveQueue       = 256
)

// observerPool runs observe hooks off the caller's path: a fixed set of
// workers drains a bounded queue. submit never blocks — when the queue is
// full the hook is dropped and the drop logged — so observers cannot slow
// the pipeline down however slow they are.
type observerPool struct {
	log    hclog.Logger
	tel    telemetry
	jobs   chan observeJob
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu     sync.RWMutex // guards closed against a send on a closed channel
	closed bool

	cancelled atomic.Int64
}

type observeJob struct {
	hook  *Hook
	stdin []byte
	// parent is the span of the call that fired the hook: the observer's
	// span joins its trace, though it runs after the call has returned.
	parent trace.SpanContext
}

func newObserverPool(log hclog.Logger, tel telemetry, workers, queue int) *observerPool {
	if workers <= 0 {
		workers = defaultObserveConcurrency
	}
	if queue <= 0 {
		queue = defaultObserveQueue
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &observerPool{log: log, tel: tel, jobs: make(chan observeJob, queue), ctx: ctx, cancel: cancel}
	p.wg.Add(workers)
	for range workers {
		go p.work()
	}
	return p
}

func (p *observerPool) submit(ctx context.Context, h *Hook, stdin []byte) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.closed {
		p.log.Error("observe hook dropped: runtime is closed", "hook", h.Name)
		return
	}
	select {
	case p.jobs <- observeJob{hook: h, stdin: stdin, parent: trace.SpanContextFromContext(ctx)}:
	default:
		p.log.Error("observe hook dropped: queue full", "hook", h.Name, "queue", cap(p.jobs))
	}
}

func (p *observerPool) work() {
	defer p.wg.Done()
	for job := range p.jobs {
		if p.ctx.Err() != nil {
			p.cancelled.Add(1)
			p.log.Error("observe hook cancelled before it ran: runtime closed", "hook", job.hook.Name)
			continue
		}
		p.run(job)
	}
}

func (p *observerPool) run(job observeJob) {
	h := job.hook
	start := time.Now()
	ctx, call := p.tel.start(trace.ContextWithSpanContext(p.ctx, job.parent), h)
	resp, err := h.spawn(ctx, job.stdin)
	call.end(spawnOutcome(err))
	if err != nil {
		if p.ctx.Err() != nil {
			p.cancelled.Add(1)
		}
		sc := h.scrubber()
		p.log.Error("observe hook failed", "hook", h.Name, "sandbox", h.SandboxName(),
			"error", sc.String(err.Error()), "stderr", stderrExcerpt(resp, sc), "elapsed", time.Since(start))
		return
	}
	p.log.Debug("observe hook done", "hook", h.Name, "sandbox", h.SandboxName(), "elapsed", time.Since(start))
}

// close stops intake, then waits for queued and running observers until ctx
// is done; what is still running then is cancelled and waited for (its
// sandbox kills it, which is bounded by the sandbox's kill grace).
func (p *observerPool) close(ctx context.Context) error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	close(p.jobs)
	p.mu.Unlock()

	done := make(chan struct{})
	go func() {
		p.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		p.cancel()
		return nil
	case <-ctx.Done():
	}
	p.cancel()
	<-done
	if n := p.cancelled.Load(); n > 0 {
		return fmt.Errorf("close: %d observe hook(s) cancelled at the close deadline", n)
	}
	return nil
}
