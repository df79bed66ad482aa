package arena

import "sync"

// releaser is the io.Closer Open returns: it releases its sandbox
// exactly once, however often and from however many goroutines Close is
// called (arena calls it once when the scope ends; a rollback or a hook
// may call it too), and every call returns the one release's error.
type releaser struct {
	once    sync.Once
	release func() error
	err     error
}

func (r *releaser) Close() error {
	r.once.Do(func() { r.err = r.release() })
	return r.err
}
