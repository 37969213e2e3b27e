package catchup

// ACL is one Kafka access control entry on a topic resource, as the
// authorizer keeps it: Principal is allowed or denied Operation on Topic
// from Host. Operation and Permission are spelled as kafka-acls.sh and the
// Java AclOperation and AclPermissionType name them (READ, WRITE, ALL,
// DESCRIBE, ...; ALLOW, DENY), so that logs and --json read like the
// broker's own tools.
type ACL struct {
	Topic string `json:"topic"`
	// Prefixed is a PREFIXED resource pattern: the entry applies to every
	// topic whose name starts with Topic. False is a LITERAL pattern.
	Prefixed   bool   `json:"prefixed,omitempty"`
	Principal  string `json:"principal"` // User:alice
	Host       string `json:"host"`      // * for any host
	Operation  string `json:"operation"`
	Permission string `json:"permission"`
}

// ACL operations and permissions the engine's rules name.
const (
	ACLAll   = "ALL"
	ACLRead  = "READ"
	ACLWrite = "WRITE"
	ACLAllow = "ALLOW"
	ACLDeny  = "DENY"
)
