package kafkago

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go/sasl"

	"github.com/kafka-catchup/catchup/internal/awsapi"
	"github.com/kafka-catchup/catchup/internal/awsapi/awsapitest"
)

// TestMSKIAMSignsAsTheRole signs the AWS_MSK_IAM authentication of a
// cluster with aws_role_arn against moto's STS: the signature's credential
// is the one AssumeRole handed out (a temporary ASIA key with a session
// token), not the process's own key, which signs a cluster without a role.
func TestMSKIAMSignsAsTheRole(t *testing.T) {
	t.Setenv("AWS_ENDPOINT_URL", awsapitest.Moto(t))
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIACATCHUPTEST")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "catchup-test")
	t.Setenv(awsapi.EnvRecord, "")
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	credential := func(role string) map[string]string {
		t.Helper()
		m, err := mskIAM("eu-west-1", role, "dr-1")
		if err != nil {
			t.Fatal(err)
		}
		// The broker's host, as kafka-go puts it on the context.
		_, ir, err := m.Start(sasl.WithMetadata(ctx, &sasl.Metadata{Host: "b-1.dr.kafka.eu-west-1.amazonaws.com", Port: 9098}))
		if err != nil {
			t.Fatalf("sign as %q: %v", role, err)
		}
		var signed map[string]string
		if err := json.Unmarshal(ir, &signed); err != nil {
			t.Fatal(err)
		}
		return signed
	}
	asRole := credential("arn:aws:iam::222233334444:role/catchup-msk")
	if c := asRole["x-amz-credential"]; !strings.HasPrefix(c, "ASIA") || !strings.Contains(c, "/eu-west-1/kafka-cluster/") || asRole["x-amz-security-token"] == "" {
		t.Errorf("signed as the role with credential %q (session token %t); want the assumed role's ASIA key for kafka-cluster in eu-west-1",
			c, asRole["x-amz-security-token"] != "")
	}
	if c := credential("")["x-amz-credential"]; !strings.HasPrefix(c, "AKIACATCHUPTEST/") {
		t.Errorf("signed without a role with credential %q; want the process's own key", c)
	}
}
