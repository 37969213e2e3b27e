package config

import (
	"os"
	"strings"
)

// GSSAPI defaults: the brokers' service name, Kafka's
// sasl.kerberos.service.name default, and the krb5.conf that $KRB5_CONFIG
// does not name.
const (
	DefaultKerberosService = "kafka"
	DefaultKrb5Conf        = "/etc/krb5.conf"
)

// setKerberosDefaults fills a GSSAPI block's service_name, and krb5_conf
// from $KRB5_CONFIG, else DefaultKrb5Conf, as the MIT library does.
func (s *SASL) setKerberosDefaults() {
	if s.Mechanism != "GSSAPI" {
		return
	}
	if s.ServiceName == "" {
		s.ServiceName = DefaultKerberosService
	}
	if s.Krb5Conf == "" {
		s.Krb5Conf = os.Getenv("KRB5_CONFIG")
	}
	if s.Krb5Conf == "" {
		s.Krb5Conf = DefaultKrb5Conf
	}
}

// checkKerberos checks a GSSAPI block: a principal that logs in with a
// keytab or with one password source, and a krb5.conf that exists.
func (s *SASL) checkKerberos(c *checker, path string) {
	at := func(field string) string { return path + "." + field }
	for _, f := range []struct{ key, value, fix string }{{"username", s.Username, "give the Kerberos principal in principal"},
		{"region", s.Region, "it is for AWS_MSK_IAM"}} {
		if f.value != "" {
			c.addf(at(f.key), "is not used with GSSAPI: %s", f.fix)
		}
	}
	switch p := s.Principal; {
	case p == "":
		c.addf(at("principal"), "required with mechanism GSSAPI: the Kerberos principal catchup logs in as, such as catchup@EXAMPLE.COM")
	case strings.Count(p, "@") > 1 || strings.HasPrefix(p, "@") || strings.HasSuffix(p, "@") || strings.HasPrefix(p, "/") ||
		strings.ContainsAny(p, " \t\n"):
		c.addf(at("principal"), "%q is not a Kerberos principal: write NAME[/INSTANCE]@REALM, such as catchup@EXAMPLE.COM", p)
	}
	secrets := count(s.PasswordEnv, s.PasswordFile, s.PasswordSecretARN)
	switch {
	case s.KeytabFile == "" && secrets == 0:
		c.addf(path, "mechanism GSSAPI needs the principal's keys: set keytab_file (a keytab, as made by kadmin or ktutil), "+
			"or its password in password_env, password_file or password_secret_arn")
	case s.KeytabFile != "" && secrets > 0:
		c.addf(path, "set only one of keytab_file, password_env, password_file and password_secret_arn")
	case secrets > 1:
		c.addf(path, "set only one of password_env, password_file and password_secret_arn")
	}
	if err := checkFile(s.KeytabFile); err != nil {
		c.addf(at("keytab_file"), "%v", err)
	}
	if err := checkFile(s.Krb5Conf); err != nil {
		if s.Krb5Conf == DefaultKrb5Conf || s.Krb5Conf == os.Getenv("KRB5_CONFIG") {
			c.addf(at("krb5_conf"), "not set, and the default (%v): set krb5_conf, or KRB5_CONFIG, to the krb5.conf that names the realm's KDCs", err)
		} else {
			c.addf(at("krb5_conf"), "%v; give the krb5.conf that names the realm's KDCs, or leave it out for $KRB5_CONFIG or %s", err, DefaultKrb5Conf)
		}
	}
	if n := s.ServiceName; n != "" && strings.ContainsAny(n, "/@ \t") {
		c.addf(at("service_name"), "%q is the first part of the brokers' principal SERVICE/HOST@REALM, without '/' or '@': "+
			"the broker's sasl.kerberos.service.name, usually kafka", n)
	}
	s.checkSecretSources(c, path)
}

// checkNotKerberos reports the GSSAPI keys of a block of another mechanism.
func (s *SASL) checkNotKerberos(c *checker, path string) {
	for _, f := range []struct{ key, value string }{{"principal", s.Principal}, {"keytab_file", s.KeytabFile},
		{"krb5_conf", s.Krb5Conf}, {"service_name", s.ServiceName}} {
		if f.value != "" {
			c.addf(path+"."+f.key, "is used only with mechanism GSSAPI")
		}
	}
}
