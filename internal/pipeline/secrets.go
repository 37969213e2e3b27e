package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/kafka-catchup/catchup/internal/awsapi"
	"github.com/kafka-catchup/catchup/internal/checkpoint/dynamostore"
	cfg "github.com/kafka-catchup/catchup/internal/config"
)

// SecretsAPI is the part of the Secrets Manager client catchup uses.
type SecretsAPI interface {
	GetSecretValue(ctx context.Context, in *secretsmanager.GetSecretValueInput, optFns ...func(*secretsmanager.Options)) (*secretsmanager.GetSecretValueOutput, error)
}

// SecretsManager returns a fetcher of passwords kept in Secrets Manager: a
// secret's SecretString, or its "password" member when that string is a
// JSON object (the form Amazon MSK's SCRAM secrets take: {"username", "password"}).
// api reads the secrets of clusters without aws_role_arn; forRole, if not
// nil, returns the client that reads as a cluster's role.
func SecretsManager(api SecretsAPI, forRole func(cfg.AWSRole) SecretsAPI) cfg.SecretFetcher {
	return func(ctx context.Context, arn string, role cfg.AWSRole) (cfg.Secret, error) {
		api := api // a role's client for this fetch only
		if role.ARN != "" {
			if forRole == nil {
				return cfg.Secret{}, errors.New("no client for aws_role_arn was given")
			}
			api = forRole(role)
		}
		if api == nil {
			return cfg.Secret{}, errors.New("no Secrets Manager client was given")
		}
		out, err := api.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(arn)})
		if err != nil {
			return cfg.Secret{}, err
		}
		s := aws.ToString(out.SecretString)
		if strings.HasPrefix(strings.TrimSpace(s), "{") {
			var obj struct {
				Password *string `json:"password"`
			}
			if json.Unmarshal([]byte(s), &obj) == nil && obj.Password != nil {
				return cfg.NewSecret(*obj.Password), nil
			}
			return cfg.Secret{}, errors.New(`the secret is a JSON object without a "password" string`)
		}
		return cfg.NewSecret(s), nil
	}
}

// SecretsManagerFrom returns the fetcher of SecretsManager with clients
// made from awsCfg: its own credentials, or a cluster's role assumed with
// them (awsapi.AssumeRole).
func SecretsManagerFrom(awsCfg aws.Config) cfg.SecretFetcher {
	return SecretsManager(secretsmanager.NewFromConfig(awsCfg), func(r cfg.AWSRole) SecretsAPI {
		return secretsmanager.NewFromConfig(awsapi.AssumeRole(awsCfg, r.ARN, r.ExternalID))
	})
}

// ResolveSecrets fetches, with Secrets Manager clients from the standard
// AWS configuration, the passwords f names by password_secret_arn. A file
// that names none makes no AWS call.
func ResolveSecrets(ctx context.Context, f *cfg.File) error {
	need := false
	for i := range f.Pipelines {
		for _, c := range []*cfg.Cluster{&f.Pipelines[i].Source, &f.Pipelines[i].Target} {
			need = need || c.SASL != nil && c.SASL.PasswordSecretARN != ""
		}
	}
	if !need {
		return nil
	}
	awsCfg, err := awsapi.Config(ctx)
	if err != nil {
		return err
	}
	return f.ResolveSecrets(ctx, SecretsManagerFrom(awsCfg))
}

// Needs returns the AWS operations of the configuration's secrets and of
// the checkpoint store (dynamostore.Needs), and STS AssumeRole for a
// cluster's aws_role_arn (awsapi.Needs).
func Needs() []awsapi.Need {
	return append(append([]awsapi.Need{{Service: "Secrets Manager", Operation: "GetSecretValue", Action: "secretsmanager:GetSecretValue",
		Resource: awsapi.Secret, DecryptVia: "secretsmanager",
		By: "ResolveSecrets: each password_secret_arn, once per process (and its customer-managed KMS key, through Secrets Manager)"}},
		awsapi.Needs()...), dynamostore.Needs()...)
}
