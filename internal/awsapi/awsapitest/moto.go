// Package awsapitest starts an AWS-compatible server for tests.
package awsapitest

import (
	"bufio"
	"os/exec"
	"strings"
	"testing"
)

// Moto starts moto's AWS server (PyPI moto[server], installed by make
// deps) on a loopback ephemeral port and returns its URL. moto keeps each
// account's resources apart and maps the credentials STS AssumeRole hands
// out to the role's account, as AWS does.
func Moto(t testing.TB) string {
	t.Helper()
	cmd := exec.Command("python3", "-c", `import sys
from moto.server import ThreadedMotoServer
s = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
s.start()
print(s._server.server_port, flush=True)
sys.stdin.read()
s.stop()`)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start moto (python3 with moto[server]: make deps installs it): %v", err)
	}
	t.Cleanup(func() {
		stdin.Close()
		_ = cmd.Wait()
	})
	port, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("moto did not start (python3 with moto[server]: make deps installs it): %v\n%s", err, stderr.String())
	}
	return "http://127.0.0.1:" + strings.TrimSpace(port)
}
