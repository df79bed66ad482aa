package resident

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
)

// Session is one running resident, as a backend started it.
type Session interface {
	// Client is the resident's stream; its Err says whether it still runs.
	Client() *Client
	// Close ends the resident: it kills what still runs and exits.
	Close()
}

// RetryInterval is how soon after a start a dead resident is replaced:
// a container that keeps killing it costs a start a second, not one a
// call.
const RetryInterval = time.Second

// ErrClosed is why a closed Keeper has no resident.
var ErrClosed = errors.New("sandbox closed")

// Keeper keeps a sandbox's resident running in the place K it runs in
// (a container; a pod's container, which a selector may move). The first
// start is when the sandbox opens; if it fails the sandbox goes without a
// resident for good, since what stopped it (a read-only root, no
// temporary directory, another architecture) does not go away. After
// that a resident that died, or runs in a place the sandbox no longer
// uses, is replaced on the next call: at once when the place moved, at
// most once per RetryInterval when it died where it was.
type Keeper[K comparable, S Session] struct {
	start func(context.Context, K) (S, error)
	log   hclog.Logger

	mu       sync.Mutex
	key      K
	sess     S
	running  bool      // sess is set
	starting bool      // a call is starting one
	failed   error     // no resident ever again, and why
	started  time.Time // of the last start tried
}

// NewKeeper returns a Keeper that starts residents with start and logs
// restarts to log.
func NewKeeper[K comparable, S Session](start func(context.Context, K) (S, error), log hclog.Logger) *Keeper[K, S] {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	return &Keeper[K, S]{start: start, log: log}
}

// Open starts the first resident, in key. Its error says why every call
// will go without one.
func (k *Keeper[K, S]) Open(ctx context.Context, key K) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.started = time.Now()
	sess, err := k.start(ctx, key)
	if err != nil {
		k.failed = err
		return err
	}
	k.key, k.sess, k.running = key, sess, true
	return nil
}

// Session returns a running resident in key, starting one when the last
// one ended or runs elsewhere. ok is false when the call goes without:
// among them calls that come while another call is starting a resident,
// which do not wait for it.
func (k *Keeper[K, S]) Session(ctx context.Context, key K) (sess S, ok bool) {
	k.mu.Lock()
	if k.running && k.key == key && k.sess.Client().Err() == nil {
		defer k.mu.Unlock()
		return k.sess, true
	}
	moved := k.running && k.key != key
	if k.failed != nil || k.starting || (!moved && time.Since(k.started) < RetryInterval) {
		k.mu.Unlock()
		return sess, false
	}
	old, hadOld := k.sess, k.running
	if hadOld && !moved {
		k.log.Info("resident ended; starting another", "where", k.key, "error", k.sess.Client().Err())
	}
	var zero S
	k.sess, k.running = zero, false
	k.started, k.starting = time.Now(), true
	k.mu.Unlock()

	if hadOld {
		old.Close()
	}
	s, err := k.start(ctx, key)

	k.mu.Lock()
	defer k.mu.Unlock()
	k.starting = false
	if err != nil {
		k.log.Warn("resident did not start; calls run without one until it does", "where", key, "error", err)
		return sess, false
	}
	if k.failed != nil {
		// Closed while it started.
		s.Close()
		return sess, false
	}
	k.key, k.sess, k.running = key, s, true
	return s, true
}

// Current returns the resident last started, whether or not it still
// runs, without starting one.
func (k *Keeper[K, S]) Current() (sess S, ok bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.sess, k.running
}

// Err says why there will be no resident from now on: the first start
// failed, or the Keeper was closed. It is nil while one may run.
func (k *Keeper[K, S]) Err() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.failed
}

// Close ends the resident; there is none after it (one still starting
// is closed as soon as it has).
func (k *Keeper[K, S]) Close() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.running {
		k.sess.Close()
		var zero S
		k.sess, k.running = zero, false
	}
	k.failed = ErrClosed
}
