package pipeline_test

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

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
	fetch := pipeline.SecretsManager(api)
	for _, tt := range []struct{ arn, want string }{{"plain", "s3cret"}, {"msk", "p@ss"}} {
		got, err := fetch(t.Context(), tt.arn)
		if err != nil || got.Reveal() != tt.want {
			t.Errorf("fetch(%s) = %v, %v; want the password", tt.arn, got, err)
		}
	}
	for _, arn := range []string{"bad", "missing"} {
		if _, err := fetch(t.Context(), arn); err == nil {
			t.Errorf("fetch(%s) = nil error; want one", arn)
		}
	}
	if _, err := pipeline.SecretsManager(nil)(t.Context(), "plain"); err == nil {
		t.Error("fetch without a client = nil error; want one")
	}
}
