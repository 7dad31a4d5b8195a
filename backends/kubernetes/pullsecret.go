package kubernetes

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cornus-dev/cornus/spec"
)

// An image the cornus server's own registry holds comes with a pull
// credential (ContainerSpec.PullAuth, pull-only, one per tenant). A pod
// with one names a kubernetes.io/dockerconfigjson Secret holding it: one
// Secret per credential, named by its digest, made on first use and
// shared by every pod that uses it. The kubelet pulls with it; the
// container never sees it.

const kindPull = "pull-credential"

// PullsFromRegistry implements backends.RegistryPuller: the nodes pull.
func (b *Backend) PullsFromRegistry() {}

// pullSecretName is the Secret holding a.
func pullSecretName(a *spec.RegistryAuth) string {
	sum := sha256.Sum256([]byte(a.Server + "\x00" + a.Username + "\x00" + a.Password))
	return "cornus-pull-" + hex.EncodeToString(sum[:8])
}

// pullSecrets names the Secret of a (none without one).
func pullSecrets(a *spec.RegistryAuth) []corev1.LocalObjectReference {
	if a == nil {
		return nil
	}
	return []corev1.LocalObjectReference{{Name: pullSecretName(a)}}
}

// ensurePullSecret makes the Secret of a, unless it exists.
func (b *Backend) ensurePullSecret(ctx context.Context, a *spec.RegistryAuth) error {
	if a == nil {
		return nil
	}
	cfg, err := json.Marshal(map[string]any{"auths": map[string]any{a.Server: map[string]string{
		"username": a.Username, "password": a.Password,
		"auth": base64.StdEncoding.EncodeToString([]byte(a.Username + ":" + a.Password)),
	}}})
	if err != nil {
		return err
	}
	name := pullSecretName(a)
	sec := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{labelManagedBy: managedBy, labelKind: kindPull}},
		Type:       corev1.SecretTypeDockerConfigJson,
		Data:       map[string][]byte{corev1.DockerConfigJsonKey: cfg},
	}
	if _, err := b.core.Secrets(b.cfg.namespace).Create(ctx, sec, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return wrap(err, "create the pull credential Secret %s for %s", name, a.Server)
	}
	return nil
}
