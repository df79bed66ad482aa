package kubecluster

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// webCommand serves "hi-from-web" with busybox httpd on port 8080.
var webCommand = []string{"/bin/sh", "-c",
	"mkdir -p /tmp/www && echo hi-from-web > /tmp/www/index.html && exec httpd -f -p 8080 -h /tmp/www"}

// testService proves kube-proxy carries a Service's traffic: a pod
// reaches another through the Service's ClusterIP.
func testService(t *testing.T, c *Cluster) {
	ns := c.Namespace(t)
	c.RunPod(t, hooksPod(c, t, ns, "web", webCommand...))
	client := c.RunPod(t, hooksPod(c, t, ns, "client"))
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": "web"},
			Ports:    []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}},
		},
	}
	svc, err := c.Client.CoreV1().Services(ns).Create(context.Background(), svc, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// kube-proxy programs the rules a moment after the endpoints appear.
	out, err := eventually(30*time.Second, func() (string, error) {
		return fetch(c, ns, client.Name, svc.Spec.ClusterIP, 80)
	})
	if err != nil || !strings.HasSuffix(strings.TrimSpace(out), "hi-from-web") {
		t.Fatalf("GET / from a pod through the Service at %s:80: %q, %v", svc.Spec.ClusterIP, out, err)
	}
}

// testAPIFromPod proves pods reach the apiserver where in-cluster clients
// look for it, the kubernetes Service's address: it answers a plain HTTP
// request on its TLS port with its own complaint.
func testAPIFromPod(t *testing.T, c *Cluster) {
	ns := c.Namespace(t)
	client := c.RunPod(t, hooksPod(c, t, ns, "client"))
	out, err := fetch(c, ns, client.Name, serviceIP.String(), 443)
	if err != nil || !strings.Contains(out, "Client sent an HTTP request to an HTTPS server") {
		t.Fatalf("HTTP to %s:443 from a pod: %q, %v; want the apiserver's answer", serviceIP, out, err)
	}
}

// fetch GETs / from ip:port inside the pod, with busybox nc: busybox's
// wget, statically linked with glibc, dies of SIGSEGV in these images.
func fetch(c *Cluster, ns, pod, ip string, port int) (string, error) {
	script := fmt.Sprintf(`printf 'GET / HTTP/1.0\r\n\r\n' | nc -w 2 %s %d`, ip, port)
	stdout, stderr, err := clientExec(c, ns, pod, "", "/bin/sh", "-c", script)
	if err == nil && stdout == "" {
		err = fmt.Errorf("no answer")
	}
	if err != nil {
		return stdout, fmt.Errorf("%w: %s", err, strings.TrimSpace(stderr))
	}
	return stdout, nil
}

// eventually retries f until it succeeds or d has passed.
func eventually(d time.Duration, f func() (string, error)) (string, error) {
	deadline := time.Now().Add(d)
	for {
		out, err := f()
		if err == nil || time.Now().After(deadline) {
			return out, err
		}
		time.Sleep(500 * time.Millisecond)
	}
}
