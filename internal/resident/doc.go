// Package resident runs many calls through one long-lived process inside
// a container, so a call costs a fork and exec there instead of a new
// exec session from the container runtime (tens of milliseconds of runc
// on every call).
//
// The resident is a static binary the backend places in the container and
// starts once, through one exec session, as the user and in the working
// directory the sandbox is configured with. Serve is its loop: it reads
// framed requests on stdin and answers on stdout, running each call with
// package shell (its own process group, its stdin fed from the request,
// output capped and streamed back as it comes). Client is the backend's
// side of that stream.
//
// Each call's process gets pipes of its own: nothing it reads or writes
// touches the frames. The resident makes itself non-dumpable, so a
// call running as the same user cannot open the resident's descriptors
// through /proc or trace it to forge frames for other calls. When its
// stdin ends (the backend went away or closed the session) the resident
// kills every call still running, with its descendants, and exits.
//
// The resident is a child subreaper, and marks each call's processes
// with the call's token (CallEnv): a daemon that left its call's tree
// by a double fork becomes the resident's child, and is killed when its
// call ends (see sweep for what happens to one that strips its mark).
//
// A backend keeps its resident with a Keeper, which holds the restart
// policy both backends share, and finds what to install with SelfImage
// (the plugin's own executable, which runs as the resident when started
// with Flag).
package resident
