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
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/types"
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
	checkELF(t, bin, elf.EM_X86_64)
	out, err := exec.Command(bin, "version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "catchup ") {
		t.Errorf("%s version: %v\n%s", bin, err, out)
	}
}

// imageMachines is what the image index must hold: the platforms, each
// with the ELF machine its /catchup must be built for.
var imageMachines = map[string]elf.Machine{
	"linux/amd64": elf.EM_X86_64,
	"linux/arm64": elf.EM_AARCH64,
}

// checkELF fails t unless bin is a static, stripped ELF executable for
// machine.
func checkELF(t *testing.T, bin string, machine elf.Machine) {
	t.Helper()
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Machine != machine {
		t.Errorf("%s is built for %s, want %s", bin, f.Machine, machine)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("%s has an ELF interpreter: not static (CGO_ENABLED=0)", bin)
		}
	}
	if s := f.Section(".symtab"); s != nil {
		t.Errorf("%s has a symbol table: not stripped (-s -w)", bin)
	}
}

// TestImage checks the OCI layout make image wrote: one image index,
// tagged, holding exactly the linux/amd64 and linux/arm64 images. Each
// image's config names its platform, its entrypoint is /catchup, run as the
// non-root user 65532, and its layer's /catchup is a static binary for that
// platform's machine. The layer of the image for the machine the test runs
// on is enough for the binary alone: extracted into an empty directory and
// run there chrooted as that user, `catchup version` works.
func TestImage(t *testing.T) {
	dir := artefact(t, envImage)
	p, err := layout.FromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	top, err := p.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	m, err := top.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Manifests) != 1 || m.Manifests[0].MediaType != types.OCIImageIndex {
		t.Fatalf("%s holds %+v, want one OCI image index", dir, m.Manifests)
	}
	if ref := m.Manifests[0].Annotations["org.opencontainers.image.ref.name"]; ref == "" {
		t.Errorf("the image index in %s has no org.opencontainers.image.ref.name", dir)
	}
	idx, err := top.ImageIndex(m.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var got, want []string
	for plat := range imageMachines {
		want = append(want, plat)
	}
	for _, d := range im.Manifests {
		if d.Platform == nil {
			t.Fatalf("image %s in the index has no platform", d.Digest)
		}
		got = append(got, d.Platform.String())
	}
	if diff := cmp.Diff(want, got, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
		t.Fatalf("platforms of the image index (-want +got):\n%s", diff)
	}
	ran := false
	for _, d := range im.Manifests {
		plat := d.Platform.String()
		img, err := idx.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if got := cf.Platform().String(); got != plat {
			t.Errorf("the %s image's config says %s", plat, got)
		}
		if diff := cmp.Diff([]string{"/catchup"}, cf.Config.Entrypoint); diff != "" {
			t.Fatalf("%s entrypoint (-want +got):\n%s", plat, diff)
		}
		if cf.Config.User != "65532:65532" {
			t.Errorf("%s user %q, want 65532:65532", plat, cf.Config.User)
		}
		root := unpack(t, img)
		checkELF(t, filepath.Join(root, cf.Config.Entrypoint[0]), imageMachines[plat])
		if d.Platform.OS != runtime.GOOS || d.Platform.Architecture != runtime.GOARCH {
			continue
		}
		ran = true
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
			t.Errorf("%s: /catchup version in the image's filesystem alone: %v\nstdout: %s\nstderr: %s", plat, err, &stdout, &stderr)
		}
	}
	if !ran {
		t.Errorf("no image in the index for %s/%s to run", runtime.GOOS, runtime.GOARCH)
	}
}

// unpack extracts img's layers into a new directory and returns it.
func unpack(t *testing.T, img v1.Image) string {
	t.Helper()
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
	return root
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

// TestDockerfileBuildsAsTheRelease: the Dockerfile, for those who build
// their own image, builds the binary as the release does: CGO off, the
// build flags and every -X variable of .goreleaser.yaml's ldflags.
func TestDockerfileBuildsAsTheRelease(t *testing.T) {
	docker, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	release, err := os.ReadFile("../.goreleaser.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var build string
	for _, l := range strings.Split(strings.ReplaceAll(string(docker), "\\\n", " "), "\n") {
		if strings.Contains(l, "go build") {
			build = l
		}
	}
	if build == "" {
		t.Fatal("the Dockerfile has no go build line")
	}
	want := []string{"CGO_ENABLED=0", "-trimpath", "-s -w"}
	for _, l := range strings.Split(string(release), "\n") {
		f := strings.Fields(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "- ")))
		if len(f) >= 2 && f[0] == "-X" {
			want = append(want, "-X "+strings.SplitAfter(f[1], "=")[0])
		}
	}
	if len(want) < 4 {
		t.Fatalf("found no -X ldflags in .goreleaser.yaml: %q", want)
	}
	for _, w := range want {
		if !strings.Contains(build, w) {
			t.Errorf("the Dockerfile's build does not pass %q, as the release does:\n%s", w, build)
		}
	}
}
