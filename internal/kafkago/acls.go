package kafkago

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/segmentio/kafka-go"

	"github.com/kafka-catchup/catchup/internal/catchup"
)

// aclOperations are Kafka's ACL operation codes by name (the Java
// AclOperation), indexed by code; kafka-go's own names stop at 12.
var aclOperations = []string{"UNKNOWN", "ANY", "ALL", "READ", "WRITE", "CREATE", "DELETE", "ALTER", "DESCRIBE",
	"CLUSTER_ACTION", "DESCRIBE_CONFIGS", "ALTER_CONFIGS", "IDEMPOTENT_WRITE", "CREATE_TOKENS", "DESCRIBE_TOKENS", "TWO_PHASE_COMMIT"}

func aclOperationName(op kafka.ACLOperationType) string {
	if int(op) >= 0 && int(op) < len(aclOperations) {
		return aclOperations[op]
	}
	return "OPERATION_" + strconv.Itoa(int(op))
}

func aclOperationCode(name string) (kafka.ACLOperationType, bool) {
	for i, n := range aclOperations {
		if n == name && i > 1 { // UNKNOWN and ANY are filters, not operations
			return kafka.ACLOperationType(i), true
		}
	}
	return 0, false
}

// TopicACLs returns every ACL on a topic resource of the cluster, literal
// and prefixed, with one DescribeAcls request (DESCRIBE on the cluster). It
// implements replicate.TopicACLLister. A cluster without an authorizer
// (SECURITY_DISABLED) or a principal without DESCRIBE on the cluster gets
// an error that says what to change.
func (c *Cluster) TopicACLs(ctx context.Context) ([]catchup.ACL, error) {
	req := &kafka.DescribeACLsRequest{Filter: kafka.ACLFilter{
		ResourceTypeFilter:        kafka.ResourceTypeTopic,
		ResourcePatternTypeFilter: kafka.PatternTypeAny,
		Operation:                 kafka.ACLOperationTypeAny,
		PermissionType:            kafka.ACLPermissionTypeAny,
	}}
	var res *kafka.DescribeACLsResponse
	err := c.retryAdmin(ctx, func(ctx context.Context) (err error) {
		res, err = c.Client().DescribeACLs(ctx, req)
		if err != nil {
			return c.readError(ctx, err)
		}
		if code := errorCode(res.Error); code != 0 && retriableCode(code) {
			return mark(res.Error, catchup.ErrRetriable)
		}
		return nil
	})
	if err == nil {
		err = res.Error
	}
	if err != nil {
		return nil, c.aclError("DescribeAcls", "Describe", err)
	}
	var out []catchup.ACL
	for _, r := range res.Resources {
		if r.ResourceType != kafka.ResourceTypeTopic || r.PatternType != kafka.PatternTypeLiteral && r.PatternType != kafka.PatternTypePrefixed {
			continue
		}
		for _, a := range r.ACLs {
			perm := catchup.ACLAllow
			switch a.PermissionType {
			case kafka.ACLPermissionTypeAllow:
			case kafka.ACLPermissionTypeDeny:
				perm = catchup.ACLDeny
			default:
				continue // a filter value, never a stored entry
			}
			out = append(out, catchup.ACL{Topic: r.ResourceName, Prefixed: r.PatternType == kafka.PatternTypePrefixed,
				Principal: a.Principal, Host: a.Host, Operation: aclOperationName(a.Operation), Permission: perm})
		}
	}
	return out, nil
}

// CreateTopicACLs creates acls with one CreateAcls request (ALTER on the
// cluster). Kafka creates an entry that already exists again as a no-op,
// so a request sent twice is harmless and is retried like a read. It
// implements replicate.TopicACLCreator.
func (c *Cluster) CreateTopicACLs(ctx context.Context, acls []catchup.ACL) error {
	if len(acls) == 0 {
		return nil
	}
	req := &kafka.CreateACLsRequest{}
	for _, a := range acls {
		op, ok := aclOperationCode(a.Operation)
		if !ok {
			return fmt.Errorf("create ACL %+v in cluster %q: unknown operation %q", a, c.name, a.Operation)
		}
		perm := kafka.ACLPermissionTypeAllow
		if a.Permission == catchup.ACLDeny {
			perm = kafka.ACLPermissionTypeDeny
		}
		pattern := kafka.PatternTypeLiteral
		if a.Prefixed {
			pattern = kafka.PatternTypePrefixed
		}
		req.ACLs = append(req.ACLs, kafka.ACLEntry{ResourceType: kafka.ResourceTypeTopic, ResourceName: a.Topic,
			ResourcePatternType: pattern, Principal: a.Principal, Host: a.Host, Operation: op, PermissionType: perm})
	}
	var res *kafka.CreateACLsResponse
	err := c.retryAdmin(ctx, func(ctx context.Context) (err error) {
		res, err = c.Client().CreateACLs(ctx, req)
		if err != nil {
			return c.readError(ctx, err)
		}
		for _, e := range res.Errors {
			if code := errorCode(e); code != 0 && retriableCode(code) {
				return mark(e, catchup.ErrRetriable)
			}
		}
		return nil
	})
	if err == nil {
		var errs []error
		for i, e := range res.Errors {
			if e != nil && i < len(acls) {
				a := acls[i]
				errs = append(errs, fmt.Errorf("%s %s %s on topic %s: %w", a.Permission, a.Principal, a.Operation, a.Topic, e))
			}
		}
		err = errors.Join(errs...)
	}
	if err != nil {
		return c.aclError("CreateAcls", "Alter", err)
	}
	return nil
}

// aclError names the cluster and the fix of a failed ACL request (api),
// which needs operation (as kafka-acls.sh spells it) on the cluster.
func (c *Cluster) aclError(api, operation string, err error) error {
	who := "catchup's principal"
	if c.user != "" {
		who = "User:" + c.user
	}
	switch {
	case errors.Is(err, kafka.SecurityDisabled):
		return fmt.Errorf("cluster %q has no authorizer (SECURITY_DISABLED: authorizer.class.name is not set), so it keeps no ACLs: "+
			"set sync_acls: false in the pipeline, or enable an authorizer on the cluster: %w", c.name, err)
	case errors.Is(err, kafka.ClusterAuthorizationFailed):
		return fmt.Errorf("cluster %q refuses %s to %s: grant it %s on the cluster "+
			"(kafka-acls.sh --bootstrap-server HOST:PORT --add --allow-principal %s --operation %s --cluster), or set sync_acls: false: %w",
			c.name, api, who, operation, who, operation, err)
	}
	return fmt.Errorf("%s in cluster %q: %w", api, c.name, err)
}

// TopicACLs returns the source cluster's topic ACLs; see Cluster.TopicACLs.
func (s *Source) TopicACLs(ctx context.Context) ([]catchup.ACL, error) { return s.cl.TopicACLs(ctx) }

// TopicACLs returns the target cluster's topic ACLs; see Cluster.TopicACLs.
func (t *Target) TopicACLs(ctx context.Context) ([]catchup.ACL, error) { return t.cl.TopicACLs(ctx) }

// CreateTopicACLs creates acls in the target cluster; see
// Cluster.CreateTopicACLs.
func (t *Target) CreateTopicACLs(ctx context.Context, acls []catchup.ACL) error {
	return t.cl.CreateTopicACLs(ctx, acls)
}
