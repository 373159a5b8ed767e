package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"

	"github.com/goccy/go-yaml"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ManifestOptions shape the Kubernetes Indexed Job of a run's agents.
type ManifestOptions struct {
	Name      string // the Job's name (default pgscale-agents)
	Namespace string // empty: kubectl's current one
	Agents    int    // completions and parallelism
	Image     string // a pgscale image (the Dockerfile's: /pgscale FROM scratch)
	// Secret names the Secret holding the coordination database's
	// connection string under SecretKey (default key "coordinator"): it
	// reaches the agents as PGSCALE_COORDINATOR, never in the manifest.
	Secret, SecretKey string
	// PasswordSecret, when set, names a Secret whose key "password" is the
	// target's password: it reaches the agents as PGPASSWORD.
	PasswordSecret string
	// Args is the agents' command line after /pgscale: the agent command
	// and its options, as the command line words them (default: agent,
	// which joins DefaultJob).
	Args        []string
	CPU, Memory string // each agent's resource requests (and its memory limit)
	// Spread keeps two agents off one node (required pod anti-affinity on
	// the node's hostname).
	Spread bool
}

var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// Manifest is the Indexed Job that runs o.Agents agents: completion mode
// Indexed (Kubernetes gives each pod JOB_COMPLETION_INDEX, the agent's
// index), completions = parallelism = Agents so that all run at once,
// backoffLimit 0 and restartPolicy Never (a failed agent fails the run:
// it is never replaced mid-measurement), the coordinator's connection
// string from a Secret, resource requests, and optionally anti-affinity.
func Manifest(o ManifestOptions) (*batchv1.Job, error) {
	if o.Name == "" {
		o.Name = "pgscale-agents"
	}
	if o.SecretKey == "" {
		o.SecretKey = "coordinator"
	}
	if o.CPU == "" {
		o.CPU = "1"
	}
	if o.Memory == "" {
		o.Memory = "512Mi"
	}
	switch {
	case o.Agents < 1:
		return nil, atLeastOne(o.Agents)
	case o.Image == "":
		return nil, notGiven("Image", "name the pgscale image the agents run (the Dockerfile builds one)")
	case o.Secret == "":
		return nil, notGiven("Secret", fmt.Sprintf("name the Secret that holds the coordinator's connection string (key %q)", o.SecretKey))
	case len(o.Name) > 63 || !dnsLabel.MatchString(o.Name):
		return nil, optionError("Name", o.Name, errors.New("a Job's name must be a DNS label (lower-case letters, digits and '-', at most 63)"))
	}
	cpu, err := resource.ParseQuantity(o.CPU)
	if err != nil {
		return nil, optionError("CPU", o.CPU, err)
	}
	mem, err := resource.ParseQuantity(o.Memory)
	if err != nil {
		return nil, optionError("Memory", o.Memory, err)
	}
	n := int32(o.Agents)
	indexed := batchv1.IndexedCompletion
	labels := map[string]string{"app.kubernetes.io/name": "pgscale-agent", "app.kubernetes.io/instance": o.Name}
	args := o.Args
	if len(args) == 0 {
		args = []string{"agent"}
	}
	env := []corev1.EnvVar{{
		Name: EnvCoordinator,
		ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: o.Secret}, Key: o.SecretKey}},
	}}
	if o.PasswordSecret != "" {
		env = append(env, corev1.EnvVar{Name: "PGPASSWORD", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: o.PasswordSecret}, Key: "password"}}})
	}
	nonRoot, noEscalation, readOnly := true, false, true
	uid := int64(65532)
	pod := corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever,
		Containers: []corev1.Container{{
			Name:    "agent",
			Image:   o.Image,
			Command: []string{"/pgscale"},
			Args:    args,
			Env:     env,
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: cpu, corev1.ResourceMemory: mem},
				Limits:   corev1.ResourceList{corev1.ResourceMemory: mem},
			},
			SecurityContext: &corev1.SecurityContext{RunAsNonRoot: &nonRoot, RunAsUser: &uid, AllowPrivilegeEscalation: &noEscalation,
				ReadOnlyRootFilesystem: &readOnly, Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}},
		}},
	}
	if o.Spread {
		pod.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
				LabelSelector: &metav1.LabelSelector{MatchLabels: labels},
				TopologyKey:   "kubernetes.io/hostname",
			}},
		}}
	}
	backoff := int32(0)
	return &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{Name: o.Name, Namespace: o.Namespace, Labels: labels},
		Spec: batchv1.JobSpec{
			CompletionMode: &indexed,
			Completions:    &n,
			Parallelism:    &n,
			BackoffLimit:   &backoff,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       pod,
			},
		},
	}, nil
}

// WriteManifest writes job as YAML, as kubectl apply -f takes it.
func WriteManifest(w io.Writer, job *batchv1.Job) error {
	j, err := json.Marshal(job)
	if err != nil {
		return fmt.Errorf("manifest: %w", err)
	}
	// The API types write "creationTimestamp": null and an empty status;
	// both are left out, as kubectl's own output does.
	var m map[string]any
	if err := json.Unmarshal(j, &m); err != nil {
		return fmt.Errorf("manifest: %w", err)
	}
	delete(m, "status")
	prune(m)
	if j, err = json.Marshal(m); err != nil {
		return fmt.Errorf("manifest: %w", err)
	}
	y, err := yaml.JSONToYAML(j)
	if err != nil {
		return fmt.Errorf("manifest: %w", err)
	}
	_, err = w.Write(y)
	return err
}

// prune drops null values and the empty objects they leave, depth first.
func prune(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case map[string]any:
		for k, e := range x {
			if prune(e) {
				delete(x, k)
			}
		}
		return len(x) == 0
	case []any:
		for _, e := range x {
			prune(e)
		}
	}
	return false
}
