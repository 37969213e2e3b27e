package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	cfg "github.com/kafka-catchup/catchup/internal/config"
)

// SecretsAPI is the part of the Secrets Manager client catchup uses.
type SecretsAPI interface {
	GetSecretValue(ctx context.Context, in *secretsmanager.GetSecretValueInput, optFns ...func(*secretsmanager.Options)) (*secretsmanager.GetSecretValueOutput, error)
}

// SecretsManager returns a fetcher of passwords kept in Secrets Manager: a
// secret's SecretString, or its "password" member when that string is a
// JSON object (the form Amazon MSK's SCRAM secrets take: {"username", "password"}).
func SecretsManager(api SecretsAPI) cfg.SecretFetcher {
	return func(ctx context.Context, arn string) (cfg.Secret, error) {
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

// ResolveSecrets fetches, with a Secrets Manager client from the standard
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
	awsCfg, err := awsconfig.LoadDefaultConfig(ctx)
	if err != nil {
		return err
	}
	return f.ResolveSecrets(ctx, SecretsManager(secretsmanager.NewFromConfig(awsCfg)))
}
