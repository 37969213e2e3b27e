package pipeline

import (
	"fmt"
	"strings"

	cfg "github.com/kafka-catchup/catchup/internal/config"
	"github.com/kafka-catchup/catchup/internal/kafkago"
)

// Clusters are the connections of one pipeline: its source, read with the
// pipeline's isolation, and its target, written with its producer settings.
type Clusters struct {
	Source *kafkago.Source
	Target *kafkago.Target
}

// Close closes both connections.
func (c *Clusters) Close() {
	c.Source.Close()
	c.Target.Close()
}

// Connect prepares the connections of pipeline p, secrets resolved (the
// SASL passwords read from their variable or file, or the secret
// File.ResolveSecrets fetched). It does no network I/O. It is where the
// CLI, the Lambda handlers (internal/worker, internal/fanout) and Open dial
// a pipeline: no caller reads cluster settings or secrets itself. Errors
// name the pipeline and the cluster, never a password.
func Connect(p *cfg.Pipeline) (*Clusters, error) {
	src, err := ConnectReader(p.Source, p.Isolation)
	if err != nil {
		return nil, fmt.Errorf("pipeline %s: source: %w", p.Name, err)
	}
	dst, err := ConnectWriter(p.Target, p.Producer)
	if err != nil {
		src.Close()
		return nil, fmt.Errorf("pipeline %s: target: %w", p.Name, err)
	}
	return &Clusters{Source: src, Target: dst}, nil
}

// ConnectReader prepares a Source on cluster c reading with isolation
// ("read_committed" or "read_uncommitted"): a pipeline's source, or its
// target read back (translate, verify, group sync) with read_uncommitted.
func ConnectReader(c cfg.Cluster, isolation string) (*kafkago.Source, error) {
	s, err := settings(c)
	if err != nil {
		return nil, err
	}
	return kafkago.NewSource(s, isolation)
}

// ConnectWriter prepares a Target on cluster c producing as p says.
func ConnectWriter(c cfg.Cluster, p cfg.Producer) (*kafkago.Target, error) {
	s, err := settings(c)
	if err != nil {
		return nil, err
	}
	return kafkago.NewTarget(s, ProducerSettings(p))
}

// ProducerSettings are p as kafkago takes them.
func ProducerSettings(p cfg.Producer) kafkago.Producer {
	return kafkago.Producer{
		Acks: p.Acks, Compression: p.Compression, CompressionLevel: p.CompressionLevel, BatchRecords: p.BatchRecords, BatchBytes: p.BatchBytes,
		Timeout: p.Timeout, Idempotent: p.IdempotentEnabled(),
	}
}

// settings are c as kafkago takes it: plain values, the password resolved.
func settings(c cfg.Cluster) (kafkago.Settings, error) {
	s := kafkago.Settings{Name: c.Name, Brokers: c.Brokers, ClientID: c.ClientID, DialTimeout: c.DialTimeout}
	if c.TLSEnabled() {
		s.TLS = &kafkago.TLS{CAFile: c.TLS.CAFile, CertFile: c.TLS.CertFile, KeyFile: c.TLS.KeyFile,
			ServerName: c.TLS.ServerName, InsecureSkipVerify: c.TLS.InsecureSkipVerify}
	}
	if a := c.SASL; a != nil {
		s.SASL = &kafkago.SASL{Mechanism: a.Mechanism, Username: a.Username, Region: a.Region,
			RoleARN: a.AWSRoleARN, ExternalID: a.AWSExternalID}
		switch {
		case a.Mechanism == "OAUTHBEARER" && a.TokenFile != "":
			s.SASL.OAuth = &kafkago.OAuth{TokenFile: a.TokenFile}
		case a.Mechanism == "OAUTHBEARER":
			s.SASL.Username = a.ClientID // names the client in errors
			secret, err := a.Password()
			if err != nil {
				return kafkago.Settings{}, fmt.Errorf("cluster %q: sasl OAUTHBEARER: client secret of client %q: %w", c.Name, a.ClientID, err)
			}
			s.SASL.OAuth = &kafkago.OAuth{TokenURL: a.TokenEndpointURL, ClientID: a.ClientID, ClientSecret: secret,
				Scopes: strings.Fields(a.Scope)}
		case a.Mechanism == "GSSAPI":
			k, err := kerberosSettings(c.Name, a)
			if err != nil {
				return kafkago.Settings{}, err
			}
			s.SASL.Username, s.SASL.Kerberos = a.Principal, k // the principal names the client in errors
		case a.Mechanism != "AWS_MSK_IAM":
			pw, err := a.Password()
			if err != nil {
				return kafkago.Settings{}, fmt.Errorf("cluster %q: sasl %s: password of user %q: %w", c.Name, a.Mechanism, a.Username, err)
			}
			s.SASL.Password = pw
		}
	}
	return s, nil
}

// kerberosSettings are a's GSSAPI settings, the password resolved when the
// principal logs in with one.
func kerberosSettings(cluster string, a *cfg.SASL) (*kafkago.Kerberos, error) {
	k := &kafkago.Kerberos{Principal: a.Principal, KeytabFile: a.KeytabFile, Krb5Conf: a.Krb5Conf, ServiceName: a.ServiceName}
	if a.KeytabFile == "" {
		pw, err := a.Password()
		if err != nil {
			return nil, fmt.Errorf("cluster %q: sasl GSSAPI: password of principal %q: %w", cluster, a.Principal, err)
		}
		k.Password = pw
	}
	return k, nil
}
