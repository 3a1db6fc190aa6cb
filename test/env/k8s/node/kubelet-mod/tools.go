//go:build tools

// Package tools pins the kubelet built by ../build.sh so that `go mod tidy`
// keeps its dependencies in go.sum. Kept apart from ../../kube so that the
// control-plane binaries' cache key (which hashes that module) is unchanged.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kubelet"
)
