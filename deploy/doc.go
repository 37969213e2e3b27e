// Package deploy holds catchup's deployment files (kubernetes/, systemd/)
// and the tools and tests that build and check them: cmd/mkimage writes
// the OCI image, and the tests decode the Kubernetes manifests strictly
// into the API types, parse the systemd units, and run the release binary
// and the image's binary. It is a module of its own so that k8s.io/api and
// go-containerregistry stay out of catchup's go.mod: make test runs it.
package deploy
