package awsapi_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
	"github.com/google/go-cmp/cmp"

	"github.com/kafka-catchup/catchup/internal/awsapi"
)

func TestKindARN(t *testing.T) {
	for _, tt := range []struct {
		kind     awsapi.Kind
		id, want string
	}{
		{awsapi.Table, "checkpoints", "arn:aws:dynamodb:eu-west-1:111122223333:table/checkpoints"},
		{awsapi.Function, "catchup-replicate", "arn:aws:lambda:eu-west-1:111122223333:function:catchup-replicate"},
		{awsapi.Function, "arn:aws:lambda:eu-west-1:111122223333:function:x", "arn:aws:lambda:eu-west-1:111122223333:function:x"},
		{awsapi.Parameter, "/catchup/config", "arn:aws:ssm:eu-west-1:111122223333:parameter/catchup/config"},
		{awsapi.Parameter, "config", "arn:aws:ssm:eu-west-1:111122223333:parameter/config"},
		{awsapi.Secret, "arn:aws:secretsmanager:eu-west-1:111122223333:secret:s-AbC", "arn:aws:secretsmanager:eu-west-1:111122223333:secret:s-AbC"},
		{awsapi.Role, "r", "arn:aws:iam::111122223333:role/r"},
	} {
		if got := tt.kind.ARN("aws", "eu-west-1", "111122223333", tt.id); got != tt.want {
			t.Errorf("%s.ARN(%q) = %q, want %q", tt.kind, tt.id, got, tt.want)
		}
	}
}

// TestRecorderSeesEveryOperation records a BatchGetItem of two tables and
// a GetItem sent to an endpoint that refuses them: each is recorded once,
// before its retries, with the tables it names and the function that sent
// it.
func TestRecorderSeesEveryOperation(t *testing.T) {
	rec := awsapi.NewRecorder(nil)
	client := dynamodb.New(dynamodb.Options{Region: "eu-west-1", BaseEndpoint: aws.String("http://127.0.0.1:1"),
		Credentials: credentials.NewStaticCredentialsProvider("k", "s", ""), APIOptions: []func(*middleware.Stack) error{rec.Register},
		RetryMaxAttempts: 2})
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	key := map[string]types.AttributeValue{"pipeline": &types.AttributeValueMemberS{Value: "p"}}
	_, _ = client.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{
		"b-table": {Keys: []map[string]types.AttributeValue{key}}, "a-table": {Keys: []map[string]types.AttributeValue{key}}}})
	_, _ = client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("a-table"), Key: key})
	want := []awsapi.Call{
		{Service: "DynamoDB", Operation: "BatchGetItem", Region: "eu-west-1", Resources: []string{"a-table", "b-table"}, Path: []string{"awsapi_test.TestRecorderSeesEveryOperation"}},
		{Service: "DynamoDB", Operation: "GetItem", Region: "eu-west-1", Resources: []string{"a-table"}, Path: []string{"awsapi_test.TestRecorderSeesEveryOperation"}},
	}
	if diff := cmp.Diff(want, rec.Calls()); diff != "" {
		t.Errorf("recorded calls (-want +got):\n%s", diff)
	}
}
