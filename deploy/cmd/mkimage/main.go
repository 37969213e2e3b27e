// Command mkimage writes a multi-platform OCI image of the static catchup
// binaries without a Docker daemon and without pulling a base image: per
// platform, an empty image plus one layer holding the binary at /catchup,
// the CA certificates at /etc/ssl/certs/ca-certificates.crt, an /etc/passwd
// and /etc/group naming the non-root user 65532 (nonroot), and /tmp; the
// images go into one image index. It writes an OCI image layout directory
// (oci/: the index, for skopeo copy --all or crane push) and, per
// platform, a tarball that `docker load` and `podman load` read
// (catchup-<os>-<arch>.tar: docker load takes one platform's image, not an
// index, on Docker's classic image store).
//
//	go run ./cmd/mkimage -binary linux/amd64=../bin/image/bin/linux-amd64/catchup \
//	    -binary linux/arm64=../bin/image/bin/linux-arm64/catchup -out ../bin/image
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
	"strings"
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

// binaries is the repeated -binary os/arch=path flag, in the order given.
type binaries []binary

type binary struct {
	platform v1.Platform
	path     string
}

func (b *binaries) String() string {
	s := make([]string, len(*b))
	for i, x := range *b {
		s[i] = x.platform.String() + "=" + x.path
	}
	return strings.Join(s, " ")
}

func (b *binaries) Set(v string) error {
	plat, path, ok := strings.Cut(v, "=")
	p, err := v1.ParsePlatform(plat)
	if !ok || path == "" || err != nil || p.OS == "" || p.Architecture == "" {
		return fmt.Errorf("%q: want os/arch=path, e.g. linux/arm64=bin/image/bin/linux-arm64/catchup", v)
	}
	for _, x := range *b {
		if x.platform.Equals(*p) {
			return fmt.Errorf("%s given twice", p)
		}
	}
	*b = append(*b, binary{platform: *p, path: path})
	return nil
}

func main() {
	var bins binaries
	flag.Var(&bins, "binary", "os/arch=path of a static catchup binary built for that platform (repeat it, one per platform; required)")
	certs := flag.String("ca-certificates", "/etc/ssl/certs/ca-certificates.crt", "PEM bundle of the CA certificates to include")
	out := flag.String("out", "bin/image", "directory for the OCI layout (oci/) and the tarballs (catchup-<os>-<arch>.tar)")
	tag := flag.String("tag", "catchup:latest", "the image reference (the layout's ref.name annotation, the tarballs' tag)")
	flag.Parse()
	if err := build(bins, *certs, *out, *tag); err != nil {
		fmt.Fprintln(os.Stderr, "mkimage:", err)
		os.Exit(1)
	}
}

func build(bins binaries, certs, out, tag string) error {
	if len(bins) == 0 {
		return errors.New("-binary os/arch=path is required")
	}
	ca, err := os.ReadFile(certs)
	if err != nil {
		return fmt.Errorf("read CA certificates: %w (install the ca-certificates package, or pass -ca-certificates)", err)
	}
	ref, err := name.NewTag(tag)
	if err != nil {
		return fmt.Errorf("tag %s: %w", tag, err)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, b := range bins {
		exe, err := os.ReadFile(b.path)
		if err != nil {
			return fmt.Errorf("read %s binary: %w", b.platform, err)
		}
		layer, err := rootfs(exe, ca)
		if err != nil {
			return err
		}
		img, err := Image(layer, b.platform)
		if err != nil {
			return err
		}
		p := b.platform
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &p}})
		file := filepath.Join(out, "catchup-"+strings.ReplaceAll(p.String(), "/", "-")+".tar")
		if err := tarball.WriteToFile(file, ref, img); err != nil {
			return fmt.Errorf("write %s tarball: %w", p, err)
		}
		d, err := img.Digest()
		if err != nil {
			return err
		}
		fmt.Printf("%s %s %s: %s\n", ref, p, d, file)
	}
	if err := os.RemoveAll(filepath.Join(out, "oci")); err != nil {
		return err
	}
	lp, err := layout.Write(filepath.Join(out, "oci"), empty.Index)
	if err != nil {
		return fmt.Errorf("write OCI layout: %w", err)
	}
	if err := lp.AppendIndex(idx, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": ref.TagStr()})); err != nil {
		return fmt.Errorf("write OCI layout: %w", err)
	}
	d, err := idx.Digest()
	if err != nil {
		return err
	}
	fmt.Printf("%s index %s: %s/oci\n", ref, d, out)
	return nil
}

// Image returns an OCI image of layer for platform that runs /catchup as
// User.
func Image(layer v1.Layer, platform v1.Platform) (v1.Image, error) {
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
	cf.OS, cf.Architecture, cf.Variant = platform.OS, platform.Architecture, platform.Variant
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
