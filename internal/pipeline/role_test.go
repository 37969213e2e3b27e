package pipeline_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/kafka-catchup/catchup/internal/awsapi"
	"github.com/kafka-catchup/catchup/internal/awsapi/awsapitest"
	"github.com/kafka-catchup/catchup/internal/config"
	"github.com/kafka-catchup/catchup/internal/pipeline"
)

// TestSecretReadAsClusterRole reads a cluster's password secret kept in
// another account through its aws_role_arn, against moto's STS and Secrets
// Manager: the secret, created in the role's account, is read with the
// role's credentials (the request signed with the key AssumeRole handed
// out), the role's identity is that account, and the in-process recording of the
// calls sees sts:AssumeRole on the role, then GetSecretValue, both among
// the operations the code states it needs.
func TestSecretReadAsClusterRole(t *testing.T) {
	url := awsapitest.Moto(t)
	t.Setenv("AWS_ENDPOINT_URL", url)
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIACATCHUPTEST")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "catchup-test")
	t.Setenv(awsapi.EnvRecord, "")
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	awsCfg, err := awsapi.Config(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const roleARN = "arn:aws:iam::222233334444:role/catchup-dr-reader"
	role := config.AWSRole{ARN: roleARN, ExternalID: "dr-1"}

	// The DR account's secret, created there as the role.
	dr := secretsmanager.NewFromConfig(awsapi.AssumeRole(awsCfg, roleARN, ""))
	created, err := dr.CreateSecret(ctx, &secretsmanager.CreateSecretInput{Name: aws.String("AmazonMSK_dr"),
		SecretString: aws.String(`{"username":"replicator","password":"dr-Pa55"}`)})
	if err != nil {
		t.Fatalf("create the secret in the role's account: %v", err)
	}
	arn := aws.ToString(created.ARN)
	if !strings.Contains(arn, ":222233334444:") {
		t.Fatalf("secret %s, want it in the role's account 222233334444", arn)
	}

	rec := awsapi.NewRecorder(nil)
	var signers []string // the access key id of each request, as signed
	awsCfg.APIOptions = append(awsCfg.APIOptions, rec.Register, func(s *middleware.Stack) error {
		return s.Finalize.Add(middleware.FinalizeMiddlewareFunc("signer", func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (
			middleware.FinalizeOutput, middleware.Metadata, error) {
			if r, ok := in.Request.(*smithyhttp.Request); ok {
				_, cred, _ := strings.Cut(r.Header.Get("Authorization"), "Credential=")
				key, _, _ := strings.Cut(cred, "/")
				signers = append(signers, awsmiddleware.GetOperationName(ctx)+" "+key)
			}
			return next.HandleFinalize(ctx, in)
		}), middleware.After)
	})
	fetch := pipeline.SecretsManagerFrom(awsCfg)
	got, err := fetch(ctx, arn, role)
	if err != nil || got.Reveal() != "dr-Pa55" {
		t.Fatalf("fetch %s as %s = %v, %v; want the password", arn, roleARN, got, err)
	}
	// With the process's own credentials the DR account's secret is not found.
	var nf interface{ ErrorCode() string }
	if _, err := fetch(ctx, arn, config.AWSRole{}); !errors.As(err, &nf) || nf.ErrorCode() != "ResourceNotFoundException" {
		t.Errorf("fetch %s with the process's own credentials = %v; want ResourceNotFoundException (another account's secret)", arn, err)
	}
	if len(signers) != 3 || !strings.HasPrefix(signers[1], "GetSecretValue ASIA") || signers[2] != "GetSecretValue AKIACATCHUPTEST" {
		t.Errorf("requests signed by %q; want AssumeRole by the process's key, then GetSecretValue by the role's (ASIA...), then by the process's", signers)
	}
	var ops []string
	for _, c := range rec.Calls() {
		ops = append(ops, c.Service+" "+c.Operation+" "+strings.Join(c.Resources, ","))
		if _, ok := awsapi.Find(pipeline.Needs(), c.Service, c.Operation); !ok {
			t.Errorf("%s %s is in no adapter's permission list", c.Service, c.Operation)
		}
	}
	// GetSecretValue is recorded before its signature fetches the role's credentials.
	want := []string{"Secrets Manager GetSecretValue " + arn, "STS AssumeRole " + roleARN, "Secrets Manager GetSecretValue " + arn}
	if !slices.Equal(ops, want) {
		t.Errorf("recorded calls %q, want %q", ops, want)
	}

	// The external id reaches STS: moto returns it in no answer, so ask
	// STS who the role's credentials are.
	who, err := sts.NewFromConfig(awsapi.AssumeRole(awsCfg, roleARN, "dr-1")).GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
	if err != nil || aws.ToString(who.Account) != "222233334444" {
		t.Errorf("caller identity as the role: %v, %v; want account 222233334444", who, err)
	}
}
