//go:build tools

// Package tools pins the helm CLI built by build.sh so that `go mod tidy` keeps
// its dependencies in go.sum.
package tools

import (
	_ "helm.sh/helm/v4/cmd/helm"
)
