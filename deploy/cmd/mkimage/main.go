// Command mkimage writes an OCI image of the static catchup binary without
// a Docker daemon and without pulling a base image: an empty image plus one
// layer holding the binary at /catchup, the CA certificates at
// /etc/ssl/certs/ca-certificates.crt, an /etc/passwd and /etc/group naming
// the non-root user 65532 (nonroot), and /tmp. It writes an OCI image layout
// directory and a tarball that `docker load` and `podman load` read.
//
//	go run ./cmd/mkimage -binary ../bin/release/.../catchup -arch amd64 -out ../bin/image
package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// User is the uid and gid the image runs as: distroless's "nonroot".
const User = "65532:65532"

func main() {
	bin := flag.String("binary", "", "the static catchup binary (required)")
	arch := flag.String("arch", "amd64", "the binary's GOARCH")
	certs := flag.String("ca-certificates", "/etc/ssl/certs/ca-certificates.crt", "PEM bundle of the CA certificates to include")
	out := flag.String("out", "bin/image", "directory for the OCI layout (oci/) and the tarball (catchup.tar)")
	tag := flag.String("tag", "catchup:latest", "the tarball's image reference")
	flag.Parse()
	if err := build(*bin, *arch, *certs, *out, *tag); err != nil {
		fmt.Fprintln(os.Stderr, "mkimage:", err)
		os.Exit(1)
	}
}

func build(bin, arch, certs, out, tag string) error {
	if bin == "" {
		return errors.New("-binary is required")
	}
	exe, err := os.ReadFile(bin)
	if err != nil {
		return fmt.Errorf("read binary: %w", err)
	}
	ca, err := os.ReadFile(certs)
	if err != nil {
		return fmt.Errorf("read CA certificates: %w (install the ca-certificates package, or pass -ca-certificates)", err)
	}
	layer, err := rootfs(exe, ca)
	if err != nil {
		return err
	}
	img, err := Image(layer, arch)
	if err != nil {
		return err
	}
	ref, err := name.NewTag(tag)
	if err != nil {
		return fmt.Errorf("tag %s: %w", tag, err)
	}
	if err := os.RemoveAll(filepath.Join(out, "oci")); err != nil {
		return err
	}
	p, err := layout.Write(filepath.Join(out, "oci"), empty.Index)
	if err != nil {
		return fmt.Errorf("write OCI layout: %w", err)
	}
	if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": ref.TagStr()})); err != nil {
		return fmt.Errorf("write OCI layout: %w", err)
	}
	if err := tarball.WriteToFile(filepath.Join(out, "catchup.tar"), ref, img); err != nil {
		return fmt.Errorf("write tarball: %w", err)
	}
	d, err := img.Digest()
	if err != nil {
		return err
	}
	fmt.Printf("%s %s: %s/oci, %s/catchup.tar\n", ref, d, out, out)
	return nil
}

// Image returns an OCI image of layer for linux/arch that runs /catchup as
// User.
func Image(layer v1.Layer, arch string) (v1.Image, error) {
	img, err := mutate.AppendLayers(mutate.MediaType(empty.Image, types.OCIManifestSchema1), layer)
	if err != nil {
		return nil, fmt.Errorf("add layer: %w", err)
	}
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", arch
	cf.Config.Entrypoint = []string{"/catchup"}
	cf.Config.Cmd = []string{"--help"}
	cf.Config.User = User
	cf.Config.WorkingDir = "/tmp"
	cf.Config.Env = []string{"SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt"}
	cf.Config.Labels = map[string]string{"org.opencontainers.image.title": "catchup", "org.opencontainers.image.licenses": "Apache-2.0"}
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		return nil, fmt.Errorf("set config: %w", err)
	}
	return img, nil
}

// rootfs returns the image's one layer. Its files have a fixed time, so
// that the same binary gives the same layer digest.
func rootfs(exe, ca []byte) (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	mtime := time.Unix(0, 0)
	dirs := []string{"etc/", "etc/ssl/", "etc/ssl/certs/"}
	for _, d := range dirs {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d, Mode: 0o755, ModTime: mtime}); err != nil {
			return nil, err
		}
	}
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: "tmp/", Mode: 0o1777, ModTime: mtime}); err != nil {
		return nil, err
	}
	files := []struct {
		name string
		mode int64
		data []byte
	}{
		{"catchup", 0o755, exe},
		{"etc/ssl/certs/ca-certificates.crt", 0o644, ca},
		{"etc/passwd", 0o644, []byte("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n")},
		{"etc/group", 0o644, []byte("root:x:0:\nnonroot:x:65532:\n")},
	}
	for _, f := range files {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: f.name, Mode: f.mode, Size: int64(len(f.data)), ModTime: mtime}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil },
		tarball.WithMediaType(types.OCILayer))
}
