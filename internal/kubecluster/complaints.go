package kubecluster

import (
	"fmt"
	"io"
	"regexp"
)

// complaintComponents are the components whose errors and warnings say
// why a pod's exec or start stalled: the API server that relays it, the
// kubelet that serves it and the runtime that runs it.
var complaintComponents = []string{"kube-apiserver", "kubelet", "containerd"}

// complaint matches a klog error or warning line ("E1128 22:01:02...")
// and a containerd one ("level=error", "level=warning").
var complaint = regexp.MustCompile(`^[EW]\d{4} |level=(error|warning)`)

// WriteComplaints writes the last errors and warnings of the components
// that serve a pod's exec, each line clipped: after a failed test run,
// what the cluster said of it, bounded so a CI log keeps it whole.
func (c *Cluster) WriteComplaints(w io.Writer, perComponent int) {
	for _, name := range complaintComponents {
		lines := c.logTail(name, perComponent, complaint.MatchString)
		if len(lines) == 0 {
			continue
		}
		fmt.Fprintf(w, "kubecluster: the last %d errors and warnings of %s (%s):\n", len(lines), name, c.l.log(name))
		for _, line := range lines {
			if len(line) > 300 {
				line = line[:300] + "…"
			}
			fmt.Fprintln(w, "  "+line)
		}
	}
}
