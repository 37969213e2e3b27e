package dynamostore

import "github.com/kafka-catchup/catchup/internal/awsapi"

// Needs returns the DynamoDB operations the store sends, each with its IAM
// action, all on the table. template.yaml grants the functions what their
// runs send, docs/permissions.md lists them, and the end-to-end suites
// hold every request the code sends to this list.
func Needs() []awsapi.Need {
	need := func(op, by string) awsapi.Need {
		return awsapi.Need{Service: "DynamoDB", Operation: op, Action: "dynamodb:" + op, Resource: awsapi.Table, By: by}
	}
	return []awsapi.Need{
		need("Query", "Load (a pipeline's checkpoints: status, plan, the dispatcher's survey, a run without a shard) and LoadBegins (the begin records of start: latest)"),
		need("BatchGetItem", "LoadPartitions: the checkpoints of a shard (a dispatched worker) or of a backfill job"),
		need("GetItem", "the item a failed conditional write met, when DynamoDB returns none with the failure"),
		need("UpdateItem", "Acquire, Renew and Release a lease, Commit a checkpoint, Reset (reset), RecordVerification (verify)"),
		need("PutItem", "PutBegin: the begin record a topic of a start: latest pipeline gets on its first run (worker and dispatcher survey)"),
		need("CreateTable", "CreateTable (init-store)"),
		need("DescribeTable", "CreateTable (init-store): waits until the table is active and checks its key schema"),
	}
}
