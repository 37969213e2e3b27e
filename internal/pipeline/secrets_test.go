package pipeline_test

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/kafka-catchup/catchup/internal/config"
	"github.com/kafka-catchup/catchup/internal/pipeline"
)

// secrets is a Secrets Manager that knows a few secrets.
type secrets map[string]string

func (s secrets) GetSecretValue(_ context.Context, in *secretsmanager.GetSecretValueInput, _ ...func(*secretsmanager.Options)) (*secretsmanager.GetSecretValueOutput, error) {
	v, ok := s[aws.ToString(in.SecretId)]
	if !ok {
		return nil, errors.New("ResourceNotFoundException")
	}
	return &secretsmanager.GetSecretValueOutput{SecretString: aws.String(v)}, nil
}

func TestSecretsManager(t *testing.T) {
	api := secrets{"plain": "s3cret", "msk": `{"username":"u","password":"p@ss"}`, "bad": `{"user":"u"}`}
	other := secrets{"plain": "other-account"}
	fetch := pipeline.SecretsManager(api, func(r config.AWSRole) pipeline.SecretsAPI {
		if r.ARN != "arn:aws:iam::222233334444:role/dr" || r.ExternalID != "x" {
			t.Errorf("client for role %+v, want the cluster's", r)
		}
		return other
	})
	for _, tt := range []struct{ arn, want string }{{"plain", "s3cret"}, {"msk", "p@ss"}} {
		got, err := fetch(t.Context(), tt.arn, config.AWSRole{})
		if err != nil || got.Reveal() != tt.want {
			t.Errorf("fetch(%s) = %v, %v; want the password", tt.arn, got, err)
		}
	}
	for _, arn := range []string{"bad", "missing"} {
		if _, err := fetch(t.Context(), arn, config.AWSRole{}); err == nil {
			t.Errorf("fetch(%s) = nil error; want one", arn)
		}
	}
	// A cluster's aws_role_arn reads through the role's client.
	if got, err := fetch(t.Context(), "plain", config.AWSRole{ARN: "arn:aws:iam::222233334444:role/dr", ExternalID: "x"}); err != nil || got.Reveal() != "other-account" {
		t.Errorf("fetch as a role = %v, %v; want the role's client's secret", got, err)
	}
	if _, err := pipeline.SecretsManager(nil, nil)(t.Context(), "plain", config.AWSRole{}); err == nil {
		t.Error("fetch without a client = nil error; want one")
	}
	if _, err := pipeline.SecretsManager(api, nil)(t.Context(), "plain", config.AWSRole{ARN: "arn:aws:iam::1:role/r"}); err == nil {
		t.Error("fetch as a role without a client for it = nil error; want one")
	}
}
