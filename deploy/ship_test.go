package deploy

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/v1/layout"
)

// The artefacts under test; make ship-check builds them and sets these.
const (
	envRelease = "CATCHUP_RELEASE_BINARY" // the linux/amd64 binary goreleaser wrote
	envImage   = "CATCHUP_IMAGE_LAYOUT"   // the OCI layout directory make image wrote
)

func artefact(t *testing.T, env string) string {
	t.Helper()
	p := os.Getenv(env)
	if p == "" {
		t.Skipf("%s is not set: make ship-check builds the artefacts and runs this test", env)
	}
	return p
}

// TestReleaseBinary runs the linux/amd64 binary of the release output:
// static (no ELF interpreter, so it runs on scratch, distroless and
// Alpine), stripped (no symbol table), and `catchup version` names a
// version.
func TestReleaseBinary(t *testing.T) {
	bin := artefact(t, envRelease)
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("%s has an ELF interpreter: not static (CGO_ENABLED=0)", bin)
		}
	}
	if s := f.Section(".symtab"); s != nil {
		t.Errorf("%s has a symbol table: not stripped (-s -w)", bin)
	}
	out, err := exec.Command(bin, "version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "catchup ") {
		t.Errorf("%s version: %v\n%s", bin, err, out)
	}
}

// TestImage checks the OCI image make image wrote: one linux image whose
// entrypoint is /catchup, run as the non-root user 65532, and whose layer
// alone is enough for the binary: extracted into an empty directory and
// run there chrooted as that user, `catchup version` works.
func TestImage(t *testing.T) {
	dir := artefact(t, envImage)
	p, err := layout.FromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := p.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Manifests) != 1 {
		t.Fatalf("%d images in %s, want 1", len(m.Manifests), dir)
	}
	img, err := p.Image(m.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"/catchup"}, cf.Config.Entrypoint); diff != "" {
		t.Errorf("entrypoint (-want +got):\n%s", diff)
	}
	if cf.Config.User != "65532:65532" || cf.OS != "linux" {
		t.Errorf("user %q os %q, want 65532:65532 on linux", cf.Config.User, cf.OS)
	}
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		extract(t, rc, root)
		rc.Close()
	}
	if os.Geteuid() != 0 {
		t.Skip("chroot needs root: run as root (CI does) to run the image's binary")
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(cf.Config.Entrypoint[0], "version")
	cmd.Dir = "/"
	cmd.Env = cf.Config.Env
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: root, Credential: &syscall.Credential{Uid: 65532, Gid: 65532}}
	if err := cmd.Run(); err != nil || !strings.HasPrefix(stdout.String(), "catchup ") {
		t.Errorf("/catchup version in the image's filesystem alone: %v\nstdout: %s\nstderr: %s", err, &stdout, &stderr)
	}
}

// extract writes the files of a layer's tar stream under root.
func extract(t *testing.T, r io.Reader, root string) {
	t.Helper()
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(root, filepath.Clean("/"+h.Name))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(path, os.FileMode(h.Mode)&os.ModePerm|os.ModeSticky); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(path, os.FileMode(h.Mode)&os.ModePerm); err != nil {
				t.Fatal(err)
			}
		case tar.TypeReg:
			f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, os.FileMode(h.Mode)&os.ModePerm)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.Copy(f, tr); err != nil {
				t.Fatal(err)
			}
			f.Close()
		default:
			t.Fatalf("layer entry %s: type %c not expected", h.Name, h.Typeflag)
		}
	}
}
