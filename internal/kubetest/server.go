package kubetest

import (
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/moby/moby/client"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"
)

// Server is a loopback Kubernetes API endpoint serving pods.
type Server struct {
	URL   string // https://127.0.0.1:PORT
	Token string // the bearer token the kubeconfig carries, allowed everything

	ca     *authority
	srv    *http.Server
	docker *client.Client
	ln     net.Listener

	mu      sync.Mutex
	pods    map[string]*corev1.Pod     // by "namespace/name"
	allowed map[string]map[string]bool // token -> "verb resource" allowed; nil map = all

	execProtocols map[string]int
	refuseWS      bool // answer WebSocket exec upgrades with 400, as a proxy that blocks them does
}

// shortSkip is why Start skips under go test -short.
const shortSkip = "skipping in -short mode: the loopback Kubernetes API runs its pods as Docker containers (make test runs it)"

// Start serves on 127.0.0.1 until the test ends. Under go test -short
// (make unit) it skips the test instead: what runs in its pods runs on
// the Docker engine.
func Start(t testing.TB) *Server {
	t.Helper()
	if testing.Short() {
		t.Skip(shortSkip)
	}
	ca, err := newAuthority()
	if err != nil {
		t.Fatalf("kubetest: %v", err)
	}
	docker, err := client.New(client.FromEnv)
	if err != nil {
		t.Fatalf("kubetest: docker client: %v", err)
	}
	t.Cleanup(func() { _ = docker.Close() })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("kubetest: listen: %v", err)
	}
	s := &Server{
		URL:     "https://" + ln.Addr().String(),
		Token:   randomToken(),
		ca:      ca,
		docker:  docker,
		ln:      ln,
		pods:    map[string]*corev1.Pod{},
		allowed: map[string]map[string]bool{},

		execProtocols: map[string]int{},
	}
	s.allowed[s.Token] = nil
	mux := http.NewServeMux()
	mux.HandleFunc("GET /version", s.version)
	mux.HandleFunc("GET /api", s.apiVersions)
	mux.HandleFunc("GET /apis", s.apiGroups)
	mux.HandleFunc("GET /api/v1", s.apiResources)
	mux.HandleFunc("GET /api/v1/namespaces/{ns}", s.getNamespace)
	mux.HandleFunc("GET /api/v1/namespaces/{ns}/pods/{name}", s.getPod)
	mux.HandleFunc("GET /api/v1/namespaces/{ns}/pods", s.listPods)
	mux.HandleFunc("POST /api/v1/namespaces/{ns}/pods/{name}/exec", s.exec)
	mux.HandleFunc("GET /api/v1/namespaces/{ns}/pods/{name}/exec", s.exec)
	s.srv = &http.Server{Handler: s.authenticate(mux), ReadHeaderTimeout: 10 * time.Second, TLSConfig: &tls.Config{
		Certificates: []tls.Certificate{ca.cert},
		MinVersion:   tls.VersionTLS12,
		NextProtos:   []string{"http/1.1"}, // exec upgrades need HTTP/1.1
	}}
	go func() { _ = s.srv.ServeTLS(ln, "", "") }()
	t.Cleanup(func() { _ = s.srv.Close() })
	return s
}

func randomToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Kubeconfig writes a kubeconfig for the server into dir and returns its
// path: context "kubetest", namespace ns, the server's CA and token.
func (s *Server) Kubeconfig(t testing.TB, dir, ns string) string {
	t.Helper()
	return s.kubeconfigFor(t, dir, ns, s.Token)
}

// RestrictedKubeconfig is Kubeconfig for a user allowed only the given
// "verb resource" pairs (e.g. "get pods"): anything else is forbidden.
func (s *Server) RestrictedKubeconfig(t testing.TB, dir, ns string, allowed ...string) string {
	t.Helper()
	token := randomToken()
	set := map[string]bool{}
	for _, a := range allowed {
		set[a] = true
	}
	s.mu.Lock()
	s.allowed[token] = set
	s.mu.Unlock()
	return s.kubeconfigFor(t, dir, ns, token)
}

func (s *Server) kubeconfigFor(t testing.TB, dir, ns, token string) string {
	t.Helper()
	cfg := map[string]any{
		"apiVersion":      "v1",
		"kind":            "Config",
		"current-context": "kubetest",
		"clusters": []any{map[string]any{"name": "kubetest", "cluster": map[string]any{
			"server": s.URL, "certificate-authority-data": s.ca.caPEM,
		}}},
		"users":    []any{map[string]any{"name": "kubetest", "user": map[string]any{"token": token}}},
		"contexts": []any{map[string]any{"name": "kubetest", "context": map[string]any{"cluster": "kubetest", "user": "kubetest", "namespace": ns}}},
	}
	data, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "kubeconfig-"+token[:8])
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// AddPod adds a Running, Ready pod whose containers are the given Docker
// containers (container name -> Docker container ID).
func (s *Server) AddPod(ns, name string, podLabels map[string]string, containers map[string]string) {
	pod := &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: podLabels, UID: types.UID("uid-" + name)},
		Status: corev1.PodStatus{
			Phase:      corev1.PodRunning,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
		},
	}
	names := make([]string, 0, len(containers))
	for c := range containers {
		names = append(names, c)
	}
	sort.Strings(names)
	for _, c := range names {
		pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: c, Image: "kubetest"})
		pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, corev1.ContainerStatus{
			Name: c, Ready: true, ContainerID: "docker://" + containers[c],
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
		})
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pods[ns+"/"+name] = pod
}

// SetPhase changes a pod's phase (and readiness: only Running is Ready).
func (s *Server) SetPhase(ns, name string, phase corev1.PodPhase) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.pods[ns+"/"+name]; p != nil {
		p.Status.Phase = phase
		ready := corev1.ConditionFalse
		if phase == corev1.PodRunning {
			ready = corev1.ConditionTrue
		}
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: ready}}
	}
}

// DeletePod removes a pod.
func (s *Server) DeletePod(ns, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.pods, ns+"/"+name)
}

// authenticate checks the bearer token and, for restricted users, the
// verb and resource of the request.
func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		s.mu.Lock()
		allowed, known := s.allowed[token]
		s.mu.Unlock()
		if !known {
			writeStatus(w, http.StatusUnauthorized, metav1.StatusReasonUnauthorized, "Unauthorized", nil)
			return
		}
		if allowed != nil && strings.HasPrefix(r.URL.Path, "/api/v1/namespaces/") {
			verb, resource := access(r)
			if !allowed[verb+" "+resource] {
				writeStatus(w, http.StatusForbidden, metav1.StatusReasonForbidden, fmt.Sprintf(
					"%s %q is forbidden: User \"kubetest\" cannot %s resource %q in API group \"\" in the namespace %q",
					resource, nameOf(r.URL.Path), verb, resource, nsOf(r.URL.Path)), nil)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// access is the RBAC verb and resource of a namespaced pod request.
func access(r *http.Request) (verb, resource string) {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/") // api v1 namespaces NS pods [NAME [SUB]]
	switch {
	case len(parts) >= 7 && parts[6] == "exec":
		// API servers since 1.31 authorize a WebSocket exec (a GET) as
		// create, like a SPDY one (a POST).
		return "create", parts[4] + "/" + parts[6]
	case len(parts) >= 7:
		return map[string]string{"POST": "create", "GET": "get"}[r.Method], parts[4] + "/" + parts[6]
	case len(parts) == 6:
		return "get", parts[4]
	case len(parts) == 5:
		return "list", parts[4]
	}
	return strings.ToLower(r.Method), "unknown"
}

// nameOf is the object name in a namespaced path ("" for a list).
func nameOf(path string) string {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	if len(parts) > 5 {
		return parts[5]
	}
	return ""
}

func nsOf(path string) string {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	if len(parts) > 3 {
		return parts[3]
	}
	return ""
}

func (s *Server) getPod(w http.ResponseWriter, r *http.Request) {
	ns, name := r.PathValue("ns"), r.PathValue("name")
	s.mu.Lock()
	pod := s.pods[ns+"/"+name]
	var out []byte
	if pod != nil {
		out, _ = json.Marshal(pod)
	}
	s.mu.Unlock()
	if pod == nil {
		writeStatus(w, http.StatusNotFound, metav1.StatusReasonNotFound, fmt.Sprintf("pods %q not found", name),
			&metav1.StatusDetails{Name: name, Kind: "pods"})
		return
	}
	writeJSON(w, out)
}

// getNamespace answers for any namespace: kubectl asks after a NotFound
// whether the namespace itself exists.
func (s *Server) getNamespace(w http.ResponseWriter, r *http.Request) {
	out, _ := json.Marshal(corev1.Namespace{
		TypeMeta:   metav1.TypeMeta{Kind: "Namespace", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: r.PathValue("ns")},
		Status:     corev1.NamespaceStatus{Phase: corev1.NamespaceActive},
	})
	writeJSON(w, out)
}

func (s *Server) listPods(w http.ResponseWriter, r *http.Request) {
	ns := r.PathValue("ns")
	sel, err := labels.Parse(r.URL.Query().Get("labelSelector"))
	if err != nil {
		writeStatus(w, http.StatusBadRequest, metav1.StatusReasonBadRequest, "unable to parse requirement: "+err.Error(), nil)
		return
	}
	list := corev1.PodList{TypeMeta: metav1.TypeMeta{Kind: "PodList", APIVersion: "v1"}, ListMeta: metav1.ListMeta{ResourceVersion: "1"}}
	s.mu.Lock()
	for _, p := range s.pods {
		if p.Namespace == ns && sel.Matches(labels.Set(p.Labels)) {
			list.Items = append(list.Items, *p.DeepCopy())
		}
	}
	s.mu.Unlock()
	sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].Name < list.Items[j].Name })
	out, _ := json.Marshal(list)
	writeJSON(w, out)
}

func (s *Server) version(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, []byte(`{"major":"1","minor":"32","gitVersion":"v1.32.0-kubetest","platform":"linux/amd64"}`))
}

func (s *Server) apiVersions(w http.ResponseWriter, r *http.Request) {
	out, _ := json.Marshal(metav1.APIVersions{
		TypeMeta:                   metav1.TypeMeta{Kind: "APIVersions"},
		Versions:                   []string{"v1"},
		ServerAddressByClientCIDRs: []metav1.ServerAddressByClientCIDR{{ClientCIDR: "0.0.0.0/0", ServerAddress: r.Host}},
	})
	writeJSON(w, out)
}

func (s *Server) apiGroups(w http.ResponseWriter, _ *http.Request) {
	out, _ := json.Marshal(metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}, Groups: []metav1.APIGroup{}})
	writeJSON(w, out)
}

func (s *Server) apiResources(w http.ResponseWriter, _ *http.Request) {
	out, _ := json.Marshal(metav1.APIResourceList{
		TypeMeta:     metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
		GroupVersion: "v1",
		APIResources: []metav1.APIResource{
			{Name: "pods", SingularName: "pod", Namespaced: true, Kind: "Pod", ShortNames: []string{"po"}, Verbs: []string{"get", "list"}},
			{Name: "pods/exec", SingularName: "", Namespaced: true, Kind: "PodExecOptions", Verbs: []string{"create", "get"}},
		},
	})
	writeJSON(w, out)
}

func writeJSON(w http.ResponseWriter, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}

func writeStatus(w http.ResponseWriter, code int, reason metav1.StatusReason, msg string, details *metav1.StatusDetails) {
	out, _ := json.Marshal(metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure, Message: msg, Reason: reason, Code: int32(code), Details: details, // #nosec G115 -- code is an HTTP status
	})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(out)
}
